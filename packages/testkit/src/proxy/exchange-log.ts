/**
 * The checking proxy's request log: a bounded ring of the exchanges it passed on, each with what
 * it found different from the spec. `paykit-sim --proxy` prints each as the simulator's request
 * line plus one line per mismatch; the proxy's dashboard (`GET /__proxy/ui`) and
 * `GET /__proxy/exchanges` show the same records. A record holds what may be shown anywhere: no
 * body, no header value, never a card number, control, signature or key.
 *
 * @packageDocumentation
 */
import { formatRequestLine, safe, type RequestRecord } from "../http/request-log"
import { esc } from "../http/html-escape"
import { formatMismatch, type Mismatch } from "./check"
import { cleanText } from "./mask"

/** One exchange as the log keeps it. */
export interface ExchangeRecord extends RequestRecord {
  /** Sequence number, from 1. */
  readonly seq: number
  /** What differs from the spec (empty: the exchange is as the spec says). */
  readonly mismatches: ReadonlyArray<Mismatch>
  /** `forwarded` to the upstream, answered from a `replay`, or `unreachable` (the upstream did not answer: 502). */
  readonly via: "forwarded" | "replay" | "unreachable"
}

/** Exchanges kept (the oldest go first). */
export const EXCHANGE_LOG_CAPACITY = 500

/** A bounded ring of exchanges, with listeners for each new one. */
export class ExchangeLog {
  private readonly ring: Array<ExchangeRecord> = []
  private seq = 0
  private readonly listeners = new Set<(record: ExchangeRecord) => void>()

  /** Adds one exchange and tells the listeners; returns it numbered. */
  add(record: Omit<ExchangeRecord, "seq">): ExchangeRecord {
    const numbered: ExchangeRecord = { ...record, seq: ++this.seq }
    this.ring.push(numbered)
    if (this.ring.length > EXCHANGE_LOG_CAPACITY) this.ring.shift()
    for (const listener of this.listeners) {
      try {
        listener(numbered)
      } catch {
        // a listener that throws must not break the exchange it is told about
      }
    }
    return numbered
  }

  /** The kept exchanges, oldest first. */
  records(): ReadonlyArray<ExchangeRecord> {
    return [...this.ring]
  }

  /** Calls `listener` with each new exchange; returns the function that stops it. */
  subscribe(listener: (record: ExchangeRecord) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

/**
 * The log lines of an exchange: the simulator's request line (`formatRequestLine`) with the
 * number of mismatches, then `  ✗ side field: kind (rule)` per mismatch.
 */
export function formatExchangeLines(record: ExchangeRecord): Array<string> {
  const head = `${formatRequestLine(record)} ${record.via}${record.mismatches.length === 0 ? " spec ok" : ` spec MISMATCH ×${record.mismatches.length}`}`
  return [head, ...record.mismatches.map((m) => `  ✗ ${cleanText(formatMismatch(m), 300)}`)]
}

/** The proxy's dashboard: every kept exchange, newest first, its mismatches listed under it. */
export function exchangesPage(upstream: string, records: ReadonlyArray<ExchangeRecord>): string {
  const drifted = records.filter((r) => r.mismatches.length > 0).length
  const rows = [...records]
    .reverse()
    .map((r) => {
      const list = r.mismatches.length === 0
        ? `<span class="good">as the spec says</span>`
        : `<ul>${r.mismatches.map((m) => `<li><b>${esc(m.side)}</b> <code>${esc(m.field)}</code>: ${esc(m.kind)} <span class="muted">(${esc(m.rule)})</span></li>`).join("")}</ul>`
      return `<tr class="${r.mismatches.length === 0 ? "ok" : "drift"}"><td>${r.seq}</td><td>${esc(new Date(r.at).toISOString().slice(11, 23))}</td><td>${esc(r.operation)}</td><td>${esc(safe(r.clientOrderId ?? "-"))}</td><td>${r.status}</td><td>${esc(r.via)}</td><td>${list}</td></tr>`
    })
    .join("")
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="3"><title>PayKit checking proxy</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#1a2233}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #dde2ea;padding:4px 8px;text-align:left;vertical-align:top}tr.drift{background:#fff4f2}.good{color:#11683a}.muted{color:#5b6578}ul{margin:0;padding-left:18px}</style></head>
<body><h1>PayKit checking proxy</h1><p>Upstream <code>${esc(upstream)}</code>: ${records.length} exchange${records.length === 1 ? "" : "s"} kept, ${drifted} with a difference from the spec.</p>
<table><thead><tr><th>#</th><th>time</th><th>operation</th><th>client_orderid</th><th>HTTP</th><th>via</th><th>against the spec</th></tr></thead><tbody>${rows}</tbody></table></body></html>`
}
