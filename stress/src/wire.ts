/**
 * Raw requests to the simulator's web-standard handler and the contracts' decoding of its replies.
 * Used by the fuzz and forgery suites, which must send what no client would.
 */
import { ServerErrorResponse, ValidationErrorResponse } from "@paykit/contracts"
import { Either, Schema } from "effect"

export const PAY_JSON = "application/vnd.pay+json"
export const FORM = "application/x-www-form-urlencoded"
/** The origin the in-process requests are addressed to (OAuth signs the URL as addressed). */
export const ORIGIN = "http://sim.test"

export interface RawReply {
  readonly status: number
  readonly contentType: string
  readonly text: string
  readonly json: unknown
}

export async function send(fetcher: (r: Request) => Promise<Response>, path: string, body: string | Uint8Array, headers: Record<string, string>, method = "POST"): Promise<RawReply> {
  const response = await fetcher(new Request(ORIGIN + path, { method, headers, body: method === "GET" ? null : (body as BodyInit) }))
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text, json }
}

export const formHeaders = (extra: Record<string, string> = {}): Record<string, string> => ({ accept: PAY_JSON, "content-type": FORM, ...extra })

export const decodeValidationError = Schema.decodeUnknownEither(ValidationErrorResponse)
export const decodeServerError = Schema.decodeUnknownEither(ServerErrorResponse)

/** The error-code of a 400 reply that decodes as a ValidationErrorResponse, else a description of what is wrong. */
export function errorCodeOf(reply: RawReply): { ok: true; code: string; message: string } | { ok: false; why: string } {
  if (reply.status !== 400) return { ok: false, why: `status ${reply.status}` }
  const decoded = decodeValidationError(reply.json)
  if (Either.isLeft(decoded)) return { ok: false, why: `400 body is not a ValidationErrorResponse` }
  return { ok: true, code: String(decoded.right["error-code"]), message: decoded.right["error-message"] }
}
