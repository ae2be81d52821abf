/**
 * The simulator's request log: a bounded ring of the most recent requests, each reduced to a
 * {@link RequestRecord} (time, operation, client_orderid, HTTP status, error code, ms) — what may be
 * shown anywhere. The dashboard reads it, `GET /__sim/requests` serves it, and `paykit-sim` prints
 * each record as one stdout line through `onRequest` ({@link formatRequestLine}).
 *
 * Nothing of a request body is kept: no card data, no control, no OAuth header. The client_orderid
 * and the error code come from the JSON reply, which never carries a PAN or a key, and are read
 * only when someone looks (a subscriber, the dashboard), so the hot path pays one small object.
 *
 * @packageDocumentation
 */
import { operationOf, replyFacts, type RequestRecord } from "./request-line"
import type { ReplyFacts } from "./replies"

export { formatRequestLine, type RequestRecord } from "./request-line"

/** One record of the log, numbered so the dashboard can poll for the ones after the last it has. */
export interface LoggedRequest extends RequestRecord {
  /** Sequence number, from 1. */
  readonly seq: number
}

/** What a transport knows of one answered request (the reply body is read lazily). */
export interface RequestEntry {
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
