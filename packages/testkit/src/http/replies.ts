/**
 * Reply builders. Every reply is JSON with content-type `application/vnd.pay+json` and the
 * gateway's kebab-case names; ids are strings.
 *
 * @packageDocumentation
 */
import { Buffer } from "node:buffer"
import type { ErrorCode } from "@paykit/contracts"

/** The media type of every API reply. */
export const PAY_JSON = "application/vnd.pay+json"

/**
 * A reply before it becomes a web `Response` (in process) or is written to a Node socket (HTTP).
 * Building web Request/Response objects costs tens of microseconds each, so the HTTP server never
 * does.
 */
export interface SimReply {
  readonly status: number
  readonly contentType: string
  readonly body: string
  readonly location?: string
  /** `Retry-After` seconds (a 429 of the fair-use limit). */
  readonly retryAfter?: number
  /**
   * What the request log shows of this JSON reply, read from the object it was made of: the log
   * then keeps these strings instead of the reply's text (whose copies, one per request in its
   * ring, were garbage the GC moved to the old generation). Absent: the log reads the text.
   */
  readonly facts?: ReplyFacts | undefined
}

/** The client_orderid and error code of a JSON reply, as the request log shows them. */
export interface ReplyFacts {
  clientOrderId?: string
  errorCode?: string
}

/** The parts of a request the simulator reads; built from a web Request or a Node IncomingMessage. */
export interface SimRequest {
  readonly method: string
  /** Absolute URL as the client addressed it. */
  readonly url: string
  header(name: string): string | null
  text(): Promise<string>
}

/** HTTP statuses of the error codes that are not a 400. */
const STATUS_OF: Partial<Record<ErrorCode, number>> = {
  "internal-error": 500,
  "request-too-large": 413,
  "request-timeout": 408,
  "rate-limited": 429
}

/** A request refused with a 400 (or 500, 408, 413, 429 for the codes that call for them) and its spec error-code. */
export class SimError extends Error {
  readonly code: ErrorCode
  httpStatus: number
  merchantOrderId: string | undefined
  /** Seconds until a retry may succeed (`rate-limited`). */
  retryAfterS: number | undefined

  constructor(code: ErrorCode, message: string, merchantOrderId?: string) {
    super(message)
    this.code = code
    this.httpStatus = STATUS_OF[code] ?? 400
    this.merchantOrderId = merchantOrderId
  }
}

const randomPool = Buffer.allocUnsafe(16 * 256)
let poolAt = randomPool.length
const uuidOut = Buffer.allocUnsafe(36)
const HEX = Buffer.from("0123456789abcdef", "latin1")

/**
 * A random (version 4) UUID as the serial number of a reply or transaction. Not `randomUUID()`:
 * Node builds that string by concatenation, about 20 linked pieces and ~700 bytes of heap for every
 * serial number a stored transaction keeps; this one is a single flat 36-character string.
 */
export function serialNumber(): string {
  if (poolAt + 16 > randomPool.length) {
    globalThis.crypto.getRandomValues(randomPool)
    poolAt = 0
  }
  let o = 0
  for (let i = 0; i < 16; i++) {
    let b = randomPool[poolAt + i]!
    if (i === 6) b = (b & 0x0f) | 0x40
    else if (i === 8) b = (b & 0x3f) | 0x80
    if (i === 4 || i === 6 || i === 8 || i === 10) uuidOut[o++] = 45
    uuidOut[o++] = HEX[b >> 4]!
    uuidOut[o++] = HEX[b & 15]!
  }
  poolAt += 16
  return uuidOut.toString("latin1", 0, 36)
}

/** A JSON reply with the gateway's media type. */
export function json(body: unknown, status = 200): SimReply {
  const text = JSON.stringify(body)
  return { status, contentType: PAY_JSON, body: text, facts: factsOf(body, text) }
}

const NO_FACTS: ReplyFacts = Object.freeze({})

/**
 * The facts request-log.ts's `replyFacts` reads back from `text` (= JSON.stringify(body)), taken
 * from `body` itself when that is sure to give the same answer: a plain object whose
 * merchant-order-id, error-code and code are strings or absent. Anything else: undefined (the log
 * parses the text itself).
 */
export function factsOf(body: unknown, text: string): ReplyFacts | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body) || text.length > 64 * 1024 || text.charCodeAt(0) !== 123) return undefined
  const record = body as Record<string, unknown>
  if (typeof record["toJSON"] === "function") return undefined
  const id = record["merchant-order-id"]
  const errorCode = record["error-code"]
  const code = record["code"]
  if ((id !== undefined && typeof id !== "string") || (errorCode !== undefined && typeof errorCode !== "string") || (code !== undefined && typeof code !== "string")) return undefined
  const shown = errorCode ?? code
  if (id === undefined && shown === undefined) return NO_FACTS
  const facts: ReplyFacts = {}
  if (id !== undefined) facts.clientOrderId = id
  if (shown !== undefined) facts.errorCode = shown
  return facts
}

/** The ValidationErrorResponse / ServerErrorResponse body of an error. */
export function errorBody(error: SimError): Record<string, string> {
  const body: Record<string, string> = {
    // Only a 400 is a ValidationErrorResponse; every other status has the ServerErrorResponse shape.
    type: error.httpStatus === 400 ? "validation-error" : "error",
    "serial-number": serialNumber(),
    "error-message": error.message.slice(0, 1024),
    "error-code": error.code
  }
  if (error.merchantOrderId !== undefined) body["merchant-order-id"] = error.merchantOrderId.slice(0, 128)
  return body
}

/** The error reply of a {@link SimError}. */
export function errorReply(error: SimError): SimReply {
  const reply = json(errorBody(error), error.httpStatus)
  return error.retryAfterS === undefined ? reply : { ...reply, retryAfter: error.retryAfterS }
}

/** An HTML page reply. */
export function html(body: string, status = 200): SimReply {
  return { status, contentType: "text/html; charset=utf-8", body }
}

/** A 303 redirect (the hosted form sending the browser on to the ACS page). */
export function seeOther(location: string): SimReply {
  return { status: 303, contentType: "text/plain; charset=utf-8", body: "", location }
}

/** A plain JSON reply (test-only routes). */
export function plainJson(body: unknown, status = 200): SimReply {
  return { status, contentType: "application/json", body: JSON.stringify(body) }
}

/** The web Response of a reply (in-process fetch). */
export function toResponse(reply: SimReply): Response {
  const headers: Record<string, string> = { "content-type": reply.contentType }
  if (reply.location !== undefined) headers["location"] = reply.location
  if (reply.retryAfter !== undefined) headers["retry-after"] = String(reply.retryAfter)
  return new Response(reply.status === 303 ? null : reply.body, { status: reply.status, headers })
}

/** Wraps a web Request. */
export function fromWebRequest(request: Request): SimRequest {
  return {
    method: request.method,
    url: request.url,
    header: (name) => request.headers.get(name),
    text: () => request.text()
  }
}

/**
 * The reply to a failure nothing foresaw (a bug, a page or test route that threw): still the
 * interface's 500 ServerErrorResponse in its media type (docs/decisions.md#d8e-unforeseen-failures), never a text/plain body a
 * client cannot decode. The error itself is not shown: it may carry request data.
 */
export function unexpectedFailure(): SimReply {
  return errorReply(new SimError("internal-error", "unexpected simulator failure; the request may or may not have been processed"))
}
