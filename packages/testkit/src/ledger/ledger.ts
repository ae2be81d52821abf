/**
 * An order's money, as pure functions over an immutable {@link Ledger}: reserve on accept, commit
 * on approval, release on decline or error (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger). What is allowed when is the
 * table in `rules.ts`; what must always hold is `invariants.ts`.
 *
 * @packageDocumentation
 */
import { CONDITION_TEXT, RULES, holds, limitOf, totalsOf } from "./rules"
import type { Bucket, Ledger, LedgerEntry, LedgerKind, LedgerOp, Refusal } from "./types"

/** A new order's empty ledger. */
export function openLedger(kind: LedgerKind): Ledger {
  return { kind, settled: false, entries: [] }
}

/** The outcome of {@link reserve}: the ledger with the new in-flight entry, or why not. */
type Reservation =
  | { readonly ok: true; readonly ledger: Ledger; readonly entry: LedgerEntry }
  | { readonly ok: false; readonly refusal: Refusal }

/** How each limit reads in a refusal message. */
const LIMIT_TEXT = {
  "open-hold": "the open hold (authorised, less captures and releases, those processing included)",
  refundable: "what is captured and not yet returned (returns processing included)",
  open: "the whole open amount"
} as const

const refuse = (code: Refusal["code"], message: string): Reservation => ({ ok: false, refusal: { code, message } })

/**
 * Accepts operation `op` for transaction `tx` and reserves its amount (in flight until
 * {@link commit} or {@link release}), or refuses it by the rules table. `requested` is the amount
 * sent (absent: the whole of what the rule allows); `format` shows minor units in messages.
 */
export function reserve(ledger: Ledger, op: LedgerOp, tx: number, requested?: bigint, format: (minor: bigint) => string = String): Reservation {
  const rule = RULES[op]
  if (!rule.on.includes(ledger.kind)) return refuse(rule.wrongKind, `orderid: ${op} does not apply to a ${ledger.kind} order`)
  const t = totalsOf(ledger)
  for (const [condition, code] of rule.refuse) {
    if (holds(condition, ledger, t)) return refuse(code, `orderid: ${op} is not allowed: ${CONDITION_TEXT[condition]}`)
  }
  let amount: bigint
  if (rule.limit === "given") {
    amount = requested ?? 0n
    if (amount < 0n) return refuse(rule.tooMuch, "amount: must not be negative")
  } else {
    const limit = limitOf(rule.limit, t)
    amount = requested ?? limit
    if (rule.match === "exactly" && amount !== limit) {
      return refuse(rule.tooMuch, `amount: ${op} is never partial: the amount, when sent, must be the whole open ${format(limit)}`)
    }
    if (amount <= 0n || amount > limit) {
      return refuse(rule.tooMuch, `amount: ${op} of ${format(amount)} is not within ${LIMIT_TEXT[rule.limit]}, ${format(limit)}`)
    }
  }
  const moves: Partial<Record<Bucket, bigint>> = {}
  if (rule.into === "void-split") {
    const captured = limitOf("refundable", t)
    const hold = limitOf("open-hold", t)
    if (captured > 0n) moves.voided = captured
    if (hold > 0n) moves.holdReleased = hold
  } else {
    for (const bucket of rule.into) moves[bucket] = amount
  }
  const entry: LedgerEntry = { tx, op, amount, moves, state: "in-flight" }
  return { ok: true, ledger: { ...ledger, entries: [...ledger.entries, entry] }, entry }
}

/** The index of transaction `tx`'s entry, or -1 (a loop: no closure per ledger change). */
function entryIndex(ledger: Ledger, tx: number): number {
  const entries = ledger.entries
  for (let i = 0; i < entries.length; i++) if (entries[i]!.tx === tx) return i
  return -1
}

function finish(ledger: Ledger, tx: number, state: "committed" | "released"): Ledger {
  const at = entryIndex(ledger, tx)
  const entry = ledger.entries[at]
  if (entry === undefined) throw new Error(`ledger: no entry for transaction ${tx}`)
  if (entry.state !== "in-flight") throw new Error(`ledger: the entry of transaction ${tx} is already ${entry.state}`)
  const entries = ledger.entries.slice()
  entries[at] = { ...entry, state }
  return { ...ledger, entries }
}

/** The transaction was approved: its reservation becomes money moved. */
export function commit(ledger: Ledger, tx: number): Ledger {
  return finish(ledger, tx, "committed")
}

/** The transaction was declined or failed: its reservation is given back. */
export function release(ledger: Ledger, tx: number): Ledger {
  return finish(ledger, tx, "released")
}

/** Settlement: the charge can no longer be voided (and can now be charged back). */
export function settle(ledger: Ledger): Ledger {
  return ledger.settled ? ledger : { ...ledger, settled: true }
}

/** Whether transaction `tx` has an entry (it moves or reserves money). */
export function hasEntry(ledger: Ledger, tx: number): boolean {
  return entryIndex(ledger, tx) >= 0
}

/**
 * What a gateway `return` is on this order: on a preauth with nothing captured yet it releases
 * (part of) the hold; otherwise it refunds captured money.
 */
export function returnOpFor(ledger: Ledger): "refund" | "release" {
  return ledger.kind === "preauth" && totalsOf(ledger).captured === 0n ? "release" : "refund"
}
