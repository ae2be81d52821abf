/**
 * One record per request the simulator answered, and the line `paykit-sim` prints for it. The
 * record holds only what may be shown: no body, no query, no header value, never a card number, a
 * CVV, a control digest or a key. The dashboard's request ring can keep the same records.
 *
 * @packageDocumentation
 */
import { operations } from "@paykit/contracts"
import { maskPans } from "@paykit/contracts/card-data"

/** What the request log knows of one answered request. */
export interface RequestRecord {
  /** Wall-clock epoch ms when the request arrived. */
  readonly at: number
  /** HTTP method. */
  readonly method: string
  /** The path, without the query string. */
  readonly path: string
  /** The gateway operation id (`SALE`, `STATUS`, …), `test-route`, `page` or `-`. */
  readonly operation: string
  /** The merchant's order id as the reply named it (`merchant-order-id`), when it did. */
  readonly clientOrderId?: string
  /** HTTP status of the reply (0 when the connection was dropped without one). */
  readonly status: number
  /** The reply's `error-code`, when it carried one. */
  readonly errorCode?: string
  /** Milliseconds from arrival to the reply. */
  readonly ms: number
  /** The peer's address (shared mode logs who used a test route). */
  readonly remote?: string
}

// Path prefix before `{endpointId}` → operation id, and the same for the group form (decision 16).
const prefixes: Array<readonly [string, string]> = Object.values(operations).map((spec) => [
  spec.path.slice(0, spec.path.indexOf("{endpointId}")),
  spec.operationId
])

/** The operation a path addresses: an operation id, `page`, `test-route` or `-`. */
export function operationOf(path: string): string {
  const slash = path.lastIndexOf("/")
  let prefix = path.slice(0, slash + 1)
  if (prefix.endsWith("/group/")) prefix = prefix.slice(0, -"group/".length)
  for (const [p, id] of prefixes) if (p === prefix) return id
  if (/^\/__sim\/(acs|form)\//.test(path)) return "page"
  if (path.startsWith("/__sim/")) return "test-route"
  return "-"
}

/** The `merchant-order-id` and `error-code` of a JSON reply body, read without trusting it. */
export function replyFacts(body: string): { clientOrderId?: string; errorCode?: string } {
  if (body.length === 0 || body.length > 64 * 1024 || body.charCodeAt(0) !== 123 /* { */) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return {}
  }
  if (typeof parsed !== "object" || parsed === null) return {}
  const facts: { clientOrderId?: string; errorCode?: string } = {}
  const id = (parsed as Record<string, unknown>)["merchant-order-id"]
  const code = (parsed as Record<string, unknown>)["error-code"] ?? (parsed as Record<string, unknown>)["code"]
  if (typeof id === "string" || typeof id === "number") facts.clientOrderId = String(id)
  if (typeof code === "string") facts.errorCode = code
  return facts
}

/**
 * A value made safe for one log line: control characters (a forged second line) become `?`, the
 * length is capped, and a run of digits that passes Luhn (a card number someone put in an order
 * id) is masked by `maskPans` (`@paykit/contracts/card-data`: BIN + last four).
 */
export function safe(value: string, max = 64): string {
  // eslint-disable-next-line no-control-regex
  const flat = value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]/g, "?")
  const masked = maskPans(flat)
  return masked.length > max ? `${masked.slice(0, max)}…` : masked
}

/**
 * The log line of a record:
 * `2026-11-23T18:30:00.123Z POST SALE client_orderid=A-1 200 - 3.1ms`
 * (fields: time, method, operation or path, client order id, HTTP status, error code, duration).
 */
export function formatRequestLine(record: RequestRecord): string {
  const what = record.operation === "-" || record.operation === "test-route" || record.operation === "page"
    ? safe(record.path, 96)
    : record.operation
  const order = record.clientOrderId === undefined ? "-" : safe(record.clientOrderId)
  const code = record.errorCode === undefined ? "-" : safe(record.errorCode, 40)
  const from = record.remote === undefined ? "" : ` from ${safe(record.remote, 48)}`
  return `${new Date(record.at).toISOString()} ${safe(record.method, 10)} ${what} client_orderid=${order} ${record.status} ${code} ${record.ms.toFixed(1)}ms${from}`
}
