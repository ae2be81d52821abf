/**
 * Reply builders. Every reply is JSON with content-type `application/vnd.pay+json` and the
 * gateway's kebab-case names; ids are strings.
 *
 * @packageDocumentation
 */
import { randomUUID } from "node:crypto"
import type { ErrorCode } from "@paykit/contracts"

/** The media type of every API reply. */
export const PAY_JSON = "application/vnd.pay+json"

const JSON_HEADERS = { "content-type": PAY_JSON } as const

/** A request refused with a 400 (or, for `internal-error`, a 500) and its spec error-code. */
export class SimError extends Error {
  readonly code: ErrorCode
  readonly httpStatus: 400 | 500
  merchantOrderId: string | undefined

  constructor(code: ErrorCode, message: string, merchantOrderId?: string) {
    super(message)
    this.code = code
    this.httpStatus = code === "internal-error" ? 500 : 400
    this.merchantOrderId = merchantOrderId
  }
}

/** A UUID-like serial number for a reply or transaction. */
export function serialNumber(): string {
  return randomUUID()
}

/** A JSON reply with the gateway's media type. */
export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS })
}

/** The ValidationErrorResponse / ServerErrorResponse body of an error. */
export function errorBody(error: SimError): Record<string, string> {
  const body: Record<string, string> = {
    type: error.httpStatus === 500 ? "error" : "validation-error",
    "serial-number": serialNumber(),
    "error-message": error.message.slice(0, 1024),
    "error-code": error.code
  }
  if (error.merchantOrderId !== undefined) body["merchant-order-id"] = error.merchantOrderId.slice(0, 128)
  return body
}

/** The error reply of a {@link SimError}. */
export function errorReply(error: SimError): Response {
  return json(errorBody(error), error.httpStatus)
}

/** An HTML page reply. */
export function html(body: string, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8" } })
}
