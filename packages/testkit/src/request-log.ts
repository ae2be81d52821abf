/**
 * The simulator's request log: a bounded ring of the most recent requests, each reduced to what may
 * be shown anywhere (time, operation, client_orderid, HTTP status, error code, ms). The dashboard
 * reads it, and `paykit-sim` prints each record as one stdout line ({@link formatRequestLine}).
 *
 * Nothing of a request body is kept: no card data, no control, no OAuth header. The operation and
 * the client_orderid come from the path and from the JSON reply (`merchant-order-id`,
 * `error-code`), which never carries a PAN or a key. Recording is one small object per request;
 * the reply is read only when someone looks (a subscriber, or the dashboard), so the hot path pays
 * nothing for it.
 *
 * @packageDocumentation
 */
import { operations } from "@paykit/contracts"

/** One request as the log shows it. */
export interface RequestRecord {
  /** Sequence number, from 1; the dashboard polls for records after the last one it has. */
  readonly seq: number
  /** Wall-clock time the request arrived, epoch ms. */
  readonly at: number
  /** HTTP method. */
  readonly method: string
  /** The path, without the query (test routes such as `/__sim/clock/advance`). */
  readonly path: string
  /** The operation id (e.g. `SALE`), or the path for test routes and pages. */
  readonly operation: string
  /** The merchant's order id the reply names, when it names one. */
  readonly client_orderid: string | undefined
  /** The HTTP status answered; `0` when the connection was dropped (a reset fault, a closed simulator). */
  readonly status: number
  /** The reply's `error-code`, when it is an error. */
  readonly errorCode: string | undefined
  /** Time to handle, in milliseconds (wall clock, rounded to 0.1 ms). */
  readonly ms: number
}

/** What the transport hands over: the reply as the simulator built it (or `undefined` for a drop). */
export interface RepliedRequest {
  readonly method: string
  readonly url: string
  readonly reply: { readonly status: number; readonly contentType: string; readonly body: string } | undefined
}

interface Raw {
  readonly seq: number
  readonly at: number
  readonly method: string
  readonly path: string
  readonly status: number
  readonly ms: number
  /** The JSON reply of an API operation (read lazily); undefined for pages and drops. */
  readonly body: string | undefined
  view?: RequestRecord
}

/** Path prefix (up to the endpoint id) → operation id, as the router resolves them. */
const operationByPrefix = new Map<string, string>()
for (const spec of Object.values(operations) as ReadonlyArray<{ readonly operationId: string; readonly path: string }>) {
  operationByPrefix.set(spec.path.slice(0, spec.path.indexOf("{endpointId}")), spec.operationId)
}

function operationOf(path: string): string | undefined {
  let prefix = path.slice(0, path.lastIndexOf("/") + 1)
  const direct = operationByPrefix.get(prefix)
  if (direct !== undefined) return direct
  // The endpoint-group form: /{path}/group/{id}
  if (prefix.endsWith("/group/")) prefix = prefix.slice(0, -"group/".length)
  return operationByPrefix.get(prefix)
}

/** The default number of records kept. */
export const REQUEST_LOG_CAPACITY = 500

/** A bounded ring of recent requests, with listeners for each new one. */
export class RequestLog {
  private readonly ring: Array<Raw | undefined>
  private next = 0
  private seq = 0
  private readonly listeners = new Set<(record: RequestRecord) => void>()

  constructor(readonly capacity = REQUEST_LOG_CAPACITY) {
    this.ring = new Array<Raw | undefined>(capacity)
  }

  /**
   * Records one request. `startedMs` is `performance.now()` when it arrived. The dashboard's own
   * page loads and polls (`GET /__sim/ui*`, `GET /__sim/requests`) are not recorded: they would
   * drown the log they show.
   */
  record(request: RepliedRequest, startedMs: number): void {
    const url = request.url
    const start = url.indexOf("/", url.indexOf("//") + 2)
    const queryAt = url.indexOf("?", start)
    const path = start < 0 ? "/" : url.slice(start, queryAt < 0 ? undefined : queryAt)
    if (request.method === "GET" && (path === "/__sim/ui" || path.startsWith("/__sim/ui/") || path === "/__sim/requests")) return
    const reply = request.reply
    const raw: Raw = {
      seq: ++this.seq,
      at: Date.now(),
      method: request.method,
      path,
      status: reply === undefined ? 0 : reply.status,
      ms: Math.round((performance.now() - startedMs) * 10) / 10,
      body: reply !== undefined && !path.startsWith("/__sim/") && reply.contentType.includes("json") ? reply.body : undefined
    }
    this.ring[this.next] = raw
    this.next = (this.next + 1) % this.capacity
    if (this.listeners.size > 0) {
      const view = viewOf(raw)
      for (const listener of this.listeners) listener(view)
    }
  }

  /** The records kept, oldest first; with `afterSeq`, only those after that sequence number. */
  entries(afterSeq = 0): RequestRecord[] {
    const out: RequestRecord[] = []
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
  subscribe(listener: (record: RequestRecord) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }
}

function viewOf(raw: Raw): RequestRecord {
  if (raw.view !== undefined) return raw.view
  let clientOrderId: string | undefined
  let errorCode: string | undefined
  if (raw.body !== undefined) {
    try {
      const parsed = JSON.parse(raw.body) as Record<string, unknown>
      if (typeof parsed["merchant-order-id"] === "string") clientOrderId = parsed["merchant-order-id"]
      if (typeof parsed["error-code"] === "string") errorCode = parsed["error-code"]
    } catch {
      // not JSON after all: shown without them
    }
  }
  raw.view = {
    seq: raw.seq,
    at: raw.at,
    method: raw.method,
    path: raw.path,
    operation: operationOf(raw.path) ?? raw.path,
    client_orderid: clientOrderId,
    status: raw.status,
    errorCode,
    ms: raw.ms
  }
  return raw.view
}

/**
 * One log line: `2026-11-23T18:30:00.123Z SALE client_orderid=order-1 200 - 3.2ms` (a `-` for a
 * value the request has not; `reset` for a dropped connection).
 */
export function formatRequestLine(record: RequestRecord): string {
  const status = record.status === 0 ? "reset" : String(record.status)
  const operation = record.operation === record.path ? `${record.method} ${record.path}` : record.operation
  return `${new Date(record.at).toISOString()} ${operation} client_orderid=${safe(record.client_orderid)} ${status} ${safe(record.errorCode)} ${record.ms}ms`
}

/** A value as one token: quoted (JSON) when it has spaces or control characters, so no line can be forged. */
function safe(value: string | undefined): string {
  if (value === undefined || value === "") return "-"
  return /^[\x21-\x7e]+$/.test(value) ? value : JSON.stringify(value)
}
