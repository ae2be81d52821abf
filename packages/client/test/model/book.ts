/**
 * The model's book: every send of every idempotency key as the gateway received it, the
 * transaction each send made (by the reply's `serial-number`, which is its transaction's), every
 * answer a call or a `recover()` run gave about a key, and the orders as last seen (the simulator
 * forgets old ones). The invariants read only this book and the simulator.
 *
 * A key is what the merchant chose; what a key asked for is fixed by the model (one operation, one
 * order, one amount per key), so "the money a key moved" is the count of transactions its sends
 * made that are approved or still processing.
 *
 * @packageDocumentation
 */
import type { OrderView } from "@paykit/testkit"

/** What an answer says about the money of its key. */
export type VerdictKind =
  /** A success: the key's money moved (once). */
  | "applied"
  /** Proven not applied (`OutcomeUnknown` with `mayHaveApplied: false`, a refusal, `recover()`'s not-applied). */
  | "notApplied"
  /** `OutcomeUnknown` that may have applied: either, but never twice. */
  | "unknown"
  /** `ReconcileConflict`: the order contradicts the request. */
  | "conflict"
  /** Refused before sending (`Cancelled`, `StoreError`, `InputError`, a transport failure before connecting): this call sent nothing. */
  | "nothingSent"

/** One request of a key as it reached the gateway. */
export interface Send {
  readonly seq: number
  readonly key: string
  /** The client instance that sent it. */
  readonly instance: string
  readonly operation: string
  /** Set once the gateway processed it and it made a transaction (a new serial number). */
  serial?: string | undefined
  orderid?: string | undefined
}

/** One answer about a key. */
export interface Verdict {
  readonly seq: number
  readonly key: string
  readonly kind: VerdictKind
  /** Who answered: a call (`call#n on instance`) or `recover on instance`. */
  readonly source: string
  /** The answer's `_tag` (or `success`). */
  readonly tag: string
  /** For `nothingSent`: the sends this very call made (there must be none). */
  readonly ownSends?: number | undefined
}

/** A transaction attributed to the send that made it. */
export interface Attributed {
  readonly send: Send
  readonly orderid: string
  readonly serial: string
}

/** The book of one sequence. */
export class Book {
  private seq = 0
  readonly sends: Array<Send> = []
  readonly verdicts: Array<Verdict> = []
  /** Serial number → the send whose reply first carried it. */
  readonly bySerial = new Map<string, Attributed>()
  /** Every order ever seen, as last seen (an order the simulator forgot keeps its last view). */
  readonly orders = new Map<string, OrderView>()
  /** Problems found as they happen (a verdict checked at its moment). */
  readonly problems: Array<string> = []
  /** What happened, in order, for a failure's report. */
  readonly log: Array<string> = []

  next(): number {
    return ++this.seq
  }

  get now(): number {
    return this.seq
  }

  private lastLine = ""
  private repeats = 0

  note(line: string): void {
    // A line repeated (status polled while down) is written once with its count.
    if (line === this.lastLine) {
      this.repeats++
      this.log[this.log.length - 1] = `#${this.seq} ${line} (×${this.repeats + 1})`
      return
    }
    this.lastLine = line
    this.repeats = 0
    this.log.push(`#${this.seq} ${line}`)
    if (this.log.length > 400) this.log.splice(0, this.log.length - 400)
  }

  send(key: string, instance: string, operation: string): Send {
    const send: Send = { seq: this.next(), key, instance, operation }
    this.sends.push(send)
    this.note(`send ${operation} key=${key} from ${instance}`)
    return send
  }

  /** The transactions a key's sends made (any status), oldest first. */
  transactionsOf(key: string): Array<Attributed & { readonly status: string }> {
    const out: Array<Attributed & { readonly status: string }> = []
    for (const a of this.bySerial.values()) {
      if (a.send.key !== key) continue
      const tx = this.orders.get(a.orderid)?.transactions.find((t) => t.serialNumber === a.serial)
      out.push({ ...a, status: tx?.status ?? "missing" })
    }
    return out
  }

  /** The key's transactions that moved or are moving money. */
  moneyOf(key: string): Array<Attributed & { readonly status: string }> {
    return this.transactionsOf(key).filter((t) => t.status === "approved" || t.status === "processing")
  }

  verdict(v: Omit<Verdict, "seq">): Verdict {
    const verdict: Verdict = { ...v, seq: this.next() }
    this.verdicts.push(verdict)
    this.note(`answer ${v.kind} (${v.tag}) key=${v.key} by ${v.source}`)
    return verdict
  }

  keys(): Set<string> {
    const keys = new Set<string>()
    for (const s of this.sends) keys.add(s.key)
    for (const v of this.verdicts) keys.add(v.key)
    return keys
  }
}

/** A decimal amount string ("4.00", "4", "0.5") as integer cents. */
export function cents(amount: string | undefined): number {
  if (amount === undefined || amount === "") return 0
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(amount)
  if (m === null) throw new Error(`model: not an amount: ${amount}`)
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"))
}
