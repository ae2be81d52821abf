/**
 * A scripted `fetch` for unit tests: each call pops the next scripted answer. It records every
 * request (URL, headers, decoded form body) so tests can assert what was sent.
 */
export type Script =
  | { readonly status: number; readonly body: unknown }
  | { readonly reject: unknown }
  | { readonly hang: true }
  | ((req: Request, form: URLSearchParams) => Response | Promise<Response>)

export interface Sent {
  readonly url: string
  readonly headers: Headers
  readonly form: URLSearchParams
}

export function stubFetch(scripts: Array<Script>) {
  const sent: Array<Sent> = []
  const fetch = async (req: Request): Promise<Response> => {
    const form = new URLSearchParams(await req.text())
    sent.push({ url: req.url, headers: req.headers, form })
    const next = scripts.shift()
    if (next === undefined) throw new Error("stub: no more scripted answers")
    if (typeof next === "function") return next(req, form)
    if ("reject" in next) throw next.reject
    if ("hang" in next) {
      return new Promise<Response>((_, reject) => {
        req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
      })
    }
    return new Response(typeof next.body === "string" ? next.body : JSON.stringify(next.body), {
      status: next.status,
      headers: { "Content-Type": "application/vnd.pay+json" }
    })
  }
  return { fetch, sent }
}

export const reset = () => ({ reject: new TypeError("fetch failed", { cause: { code: "ECONNRESET" } }) })
export const refused = () => ({ reject: new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } }) })

export const asyncOk = (extra: Record<string, unknown> = {}) => ({
  status: 200,
  body: { type: "async-response", status: "processing", "serial-number": "sn-1", "merchant-order-id": "c-1", "paynet-order-id": 123, ...extra }
})
export const statusOk = (status = "approved", extra: Record<string, unknown> = {}) => ({
  status: 200,
  body: { type: "status-response", status, "serial-number": "sn-2", "merchant-order-id": "c-1", "paynet-order-id": "123", ...extra }
})
export const notFound = () => ({
  status: 400,
  body: { type: "validation-error", "serial-number": "sn-3", "error-message": "No order", "error-code": "order-not-found" }
})
export const http500 = () => ({
  status: 500,
  body: { type: "error", "serial-number": "sn-4", "error-message": "boom", "error-code": "internal-error" }
})
