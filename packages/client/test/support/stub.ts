/**
 * A scripted `fetch` for unit tests: each call pops the next scripted answer. It records every
 * request (URL, headers, decoded form body) so tests can assert what was sent. The attempt's signal
 * comes beside the request (`fetch(request, init)`); the stubs link it into the request they hand
 * to scripts, so a script reads it as `req.signal`.
 */

/** The request with `init.signal` linked into it, as scripts read it. */
export const signalled = (req: Request, init?: { signal?: AbortSignal }): Request =>
  init?.signal === undefined ? req : new Request(req, { signal: init.signal })
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
  const fetch = async (input: Request, init?: { signal?: AbortSignal }): Promise<Response> => {
    const req = signalled(input, init)
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

/** A scripted answer as a Response (the same shapes `stubFetch` takes). */
export async function answer(script: Script, req: Request, form: URLSearchParams): Promise<Response> {
  if (typeof script === "function") return script(req, form)
  if ("reject" in script) throw script.reject
  if ("hang" in script) {
    return new Promise<Response>((_, reject) => {
      req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
    })
  }
  return new Response(typeof script.body === "string" ? script.body : JSON.stringify(script.body), {
    status: script.status,
    headers: { "Content-Type": "application/vnd.pay+json" }
  })
}

/**
 * A `fetch` that routes by operation path segment (`sale`, `status`, `capture`, ...): each route is a
 * list of answers (the last one repeats) or a function of the form and the call count.
 */
export function routedFetch(routes: Record<string, Array<Script> | ((form: URLSearchParams, n: number) => Script)>) {
  const sent: Array<Sent & { op: string }> = []
  const counts = new Map<string, number>()
  const fetch = async (input: Request, init?: { signal?: AbortSignal }): Promise<Response> => {
    const req = signalled(input, init)
    const form = new URLSearchParams(await req.text())
    const parts = new URL(req.url).pathname.split("/")
    const op = parts[parts.length - 2]!
    sent.push({ url: req.url, headers: req.headers, form, op })
    const n = counts.get(op) ?? 0
    counts.set(op, n + 1)
    const route = routes[op]
    if (route === undefined) throw new Error(`stub: no route for ${op}`)
    const script = typeof route === "function" ? route(form, n) : route[Math.min(n, route.length - 1)]!
    return answer(script, req, form)
  }
  return { fetch, sent, count: (op: string) => sent.filter((s) => s.op === op).length }
}
