/**
 * The simulator's request log: a bounded ring of the most recent requests, each reduced to a
 * {@link RequestRecord} (time, operation, client_orderid, HTTP status, error code, ms) — what may be
 * shown anywhere — and the one line `paykit-sim` prints for a record ({@link formatRequestLine},
 * through `onRequest`). The dashboard reads the ring, `GET /__sim/requests` serves it, and the
 * checking proxy prints its exchanges with the same line.
 *
 * A record holds no body, no query, no header value: never a card number, a CVV, a control digest,
 * an OAuth header or a key. The client_orderid and the error code come from the JSON reply, which
 * never carries a PAN or a key, and are read only when someone looks (a subscriber, the dashboard),
 * so the hot path pays one small object.
 *
 * @packageDocumentation
 */
import { operations } from "@paykit/contracts"
import { maskPans } from "@paykit/contracts/card-data"
import type { ReplyFacts } from "./replies"

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

/** One record of the log, numbered so the dashboard can poll for the ones after the last it has. */
export interface LoggedRequest extends RequestRecord {
  /** Sequence number, from 1. */
  readonly seq: number
}

/** What a transport knows of one answered request (the reply body is read lazily). */
interface RequestEntry {
  readonly at: number
  readonly method: string
  readonly path: string
  /** HTTP status; 0 when the connection was dropped without a reply. */
  readonly status: number
  readonly ms: number
  readonly remote?: string | undefined
  /** Set when the transport knows it without a body (a request node:http could not parse). */
  readonly errorCode?: string | undefined
}

/** A record as kept: one object of one shape per request, its view built only when someone reads it. */
class Raw implements RequestEntry {
  view: LoggedRequest | undefined = undefined
  constructor(
    readonly seq: number,
    readonly at: number,
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly ms: number,
    readonly remote: string | undefined,
    readonly errorCode: string | undefined,
    /** The JSON reply of an API operation (read lazily); undefined for pages, test routes and drops. */
    readonly body: string | undefined,
    /** What the reply's facts are, when the transport knew them without the body (then `body` is undefined). */
    readonly facts: ReplyFacts | undefined
  ) {}
}

/** Whether a request is one of the dashboard's own page loads and polls. */
function isDashboardPoll(method: string, path: string): boolean {
  return method === "GET" && (path === "/__sim/ui" || path.startsWith("/__sim/ui/") || path === "/__sim/requests")
}

/** The default number of records kept. */
export const REQUEST_LOG_CAPACITY = 500

/** A bounded ring of recent requests, with listeners for each new one. */
export class RequestLog {
  private readonly ring: Array<Raw | undefined>
  private next = 0
  private seq = 0
  private readonly listeners = new Set<(record: LoggedRequest) => void>()

  constructor(readonly capacity = REQUEST_LOG_CAPACITY) {
    this.ring = new Array<Raw | undefined>(capacity)
  }

  /**
   * Records one request with its reply body (JSON replies only). The dashboard's own page loads
   * and polls (`GET /__sim/ui*`, `GET /__sim/requests`) are not recorded: they would drown the log
   * they show.
   */
  add(entry: RequestEntry, body?: string): void {
    this.record(entry.at, entry.method, entry.path, entry.status, entry.ms, entry.remote, body, entry.errorCode)
  }

  /**
   * {@link RequestLog.add} without an entry object (the HTTP server's hot path); `facts`, when the
   * reply's are known ({@link SimReply.facts}), stand for the body's.
   */
  record(at: number, method: string, path: string, status: number, ms: number, remote: string | undefined, body?: string, errorCode?: string, facts?: ReplyFacts): void {
    if (isDashboardPoll(method, path)) return
    const api = body !== undefined && !path.startsWith("/__sim/")
    const raw = new Raw(++this.seq, at, method, path, status, ms, remote, errorCode, api && facts === undefined ? body : undefined, api ? facts : undefined)
    this.ring[this.next] = raw
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1
    if (this.listeners.size > 0) {
      const view = viewOf(raw)
      for (const listener of this.listeners) listener(view)
    }
  }

  /** The records kept, oldest first; with `afterSeq`, only those after that sequence number. */
  entries(afterSeq = 0): LoggedRequest[] {
    const out: LoggedRequest[] = []
    for (let i = 0; i < this.capacity; i++) {
      const raw = this.ring[(this.next + i) % this.capacity]
      if (raw !== undefined && raw.seq > afterSeq) out.push(viewOf(raw))
    }
    return out
  }

  /** The sequence number of the latest record (0 before any). */
  get lastSeq(): number {
    return this.seq
  }

  /** Calls `listener` with every new record; returns the function that stops it. */
  subscribe(listener: (record: LoggedRequest) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }
}

function viewOf(raw: Raw): LoggedRequest {
  if (raw.view !== undefined) return raw.view
  const facts = raw.status < 200 ? {} : raw.facts ?? (raw.body !== undefined ? replyFacts(raw.body) : {})
  const errorCode = facts.errorCode ?? raw.errorCode
  raw.view = {
    seq: raw.seq,
    at: raw.at,
    method: raw.method,
    path: raw.path,
    operation: operationOf(raw.path),
    status: raw.status,
    ms: Math.round(raw.ms * 10) / 10,
    ...(facts.clientOrderId === undefined ? {} : { clientOrderId: facts.clientOrderId }),
    ...(errorCode === undefined ? {} : { errorCode }),
    ...(raw.remote === undefined ? {} : { remote: raw.remote })
  }
  return raw.view
}
