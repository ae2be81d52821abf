/**
 * The lifecycle of an order's money as data (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger): for each operation, the order
 * kinds it applies to, the conditions that refuse it (each with its own error-code, checked in
 * order), how much it may move, and where the money goes once approved.
 *
 * @packageDocumentation
 */
import { type Bucket, type Ledger, type LedgerEntry, type LedgerKind, type LedgerOp, type LedgerTotals, type RefusalCode } from "./types"

/** A fact about a ledger that can refuse an operation. */
type Condition =
  | "started"
  | "original-not-approved"
  | "voided"
  | "settled"
  | "not-settled"
  | "capture-in-flight"
  | "capture-or-return-in-flight"
  | "refunded"
  | "hold-closed"
  | "nothing-open"
  | "not-checked"
  | "check-declined"
  | "paid"

/** The most an operation may move. */
type Limit =
  /** An original: the amount as sent. */
  | "given"
  /** Authorised, minus captures and hold releases (committed and in flight). */
  | "open-hold"
  /** Captured, minus refunds, chargebacks and voids (committed and in flight). */
  | "refundable"
  /** Everything a void would reverse: what is captured and not refunded, plus the open hold. */
  | "open"

/** One row of the table. */
interface Rule {
  /** Order kinds the operation applies to; any other kind is refused with `wrongKind`. */
  readonly on: ReadonlyArray<LedgerKind>
  readonly wrongKind: RefusalCode
  /** Checked in order; the first condition that holds refuses with its code. */
  readonly refuse: ReadonlyArray<readonly [Condition, RefusalCode]>
  readonly limit: Limit
  /** `up-to`: 0 < amount ≤ limit (default: the limit); `exactly`: amount = limit (default: the limit); `given`: as sent. */
  readonly match: "up-to" | "exactly" | "given"
  /** The code of an amount the limit does not allow. */
  readonly tooMuch: RefusalCode
  /** Buckets the amount goes into on approval; `void-split` reverses captures and releases the rest of the hold. */
  readonly into: ReadonlyArray<Bucket> | "void-split"
}

const CHARGES: ReadonlyArray<LedgerKind> = ["sale", "rebill", "preauth"]
const ORIGINAL = [["started", "ledger-already-open"]] as const

/** Which operation is allowed in which state, what it reserves, and where its money goes. */
export const RULES: Readonly<Record<LedgerOp, Rule>> = {
  sale: { on: ["sale", "rebill", "transfer"], wrongKind: "ledger-already-open", refuse: ORIGINAL, limit: "given", match: "given", tooMuch: "ledger-already-open", into: ["authorized", "captured"] },
  preauth: { on: ["preauth"], wrongKind: "ledger-already-open", refuse: ORIGINAL, limit: "given", match: "given", tooMuch: "ledger-already-open", into: ["authorized"] },
  verify: { on: ["none"], wrongKind: "ledger-already-open", refuse: ORIGINAL, limit: "given", match: "given", tooMuch: "ledger-already-open", into: [] },
  payout: { on: ["payout"], wrongKind: "ledger-already-open", refuse: ORIGINAL, limit: "given", match: "given", tooMuch: "ledger-already-open", into: ["paidOut"] },
  "payout-check": { on: ["payout"], wrongKind: "ledger-already-open", refuse: ORIGINAL, limit: "given", match: "given", tooMuch: "ledger-already-open", into: [] },
  "payout-pay": {
    on: ["payout"],
    wrongKind: "payout-not-checked",
    refuse: [["not-checked", "payout-not-checked"], ["check-declined", "payout-check-declined"], ["paid", "payout-already-paid"]],
    limit: "given",
    match: "given",
    tooMuch: "payout-not-checked",
    into: ["paidOut"]
  },
  capture: {
    on: ["preauth"],
    wrongKind: "capture-not-allowed",
    refuse: [["original-not-approved", "capture-not-allowed"], ["voided", "capture-not-allowed"], ["hold-closed", "capture-not-allowed"]],
    limit: "open-hold",
    match: "up-to",
    tooMuch: "capture-exceeds-authorized",
    into: ["captured"]
  },
  refund: {
    on: CHARGES,
    wrongKind: "return-not-allowed",
    refuse: [["original-not-approved", "return-not-allowed"], ["voided", "return-not-allowed"]],
    limit: "refundable",
    match: "up-to",
    tooMuch: "return-exceeds-charged",
    into: ["returned"]
  },
  release: {
    on: ["preauth"],
    wrongKind: "return-not-allowed",
    refuse: [["original-not-approved", "return-not-allowed"], ["voided", "return-not-allowed"], ["capture-in-flight", "return-capture-in-flight"]],
    limit: "open-hold",
    match: "up-to",
    tooMuch: "return-exceeds-charged",
    into: ["holdReleased"]
  },
  void: {
    on: CHARGES,
    wrongKind: "void-not-allowed",
    refuse: [
      ["original-not-approved", "void-not-allowed"],
      ["voided", "void-not-allowed"],
      ["settled", "void-not-allowed"],
      ["capture-or-return-in-flight", "void-in-flight"],
      ["refunded", "void-not-allowed"],
      ["nothing-open", "void-not-allowed"]
    ],
    limit: "open",
    match: "exactly",
    tooMuch: "void-partial-not-allowed",
    into: "void-split"
  },
  chargeback: {
    on: CHARGES,
    wrongKind: "chargeback-not-allowed",
    refuse: [["original-not-approved", "chargeback-not-allowed"], ["voided", "chargeback-not-allowed"], ["not-settled", "chargeback-not-allowed"]],
    limit: "refundable",
    match: "up-to",
    tooMuch: "chargeback-not-allowed",
    into: ["chargedBack"]
  }
}

/** Operations that open an order (its first entry). */
export const ORIGINALS: ReadonlySet<LedgerOp> = new Set(["sale", "preauth", "verify", "payout", "payout-check"])

/** How each condition reads in a refusal message. */
export const CONDITION_TEXT: Readonly<Record<Condition, string>> = {
  started: "the order already has its original transaction",
  "original-not-approved": "its original transaction is not approved",
  voided: "it is voided (or a void is processing)",
  settled: "it is settled",
  "not-settled": "it is not settled",
  "capture-in-flight": "a capture is still processing (what a return gives back depends on it)",
  "capture-or-return-in-flight": "a capture or return is still processing",
  refunded: "part of it was refunded (a void is never partial)",
  "hold-closed": "its hold was released",
  "nothing-open": "nothing is left open",
  "not-checked": "it was not registered by payout-check",
  "check-declined": "its payout-check was declined",
  paid: "it is already paid (or paying)"
}

function zero(): Record<Bucket, bigint> {
  return { authorized: 0n, captured: 0n, returned: 0n, holdReleased: 0n, voided: 0n, chargedBack: 0n, paidOut: 0n }
}

/**
 * Adds an entry's moves into `into`, bucket by bucket by name (a `for…in` over the moves and keyed
 * loads and stores cost more than the seven named checks). ledger.test.ts moves money into every
 * bucket of `BUCKETS`, committed and in flight, and checks that each one is counted.
 */
function addMoves(into: Record<Bucket, bigint>, moves: LedgerEntry["moves"]): void {
  if (moves.authorized !== undefined) into.authorized += moves.authorized
  if (moves.captured !== undefined) into.captured += moves.captured
  if (moves.returned !== undefined) into.returned += moves.returned
  if (moves.holdReleased !== undefined) into.holdReleased += moves.holdReleased
  if (moves.voided !== undefined) into.voided += moves.voided
  if (moves.chargedBack !== undefined) into.chargedBack += moves.chargedBack
  if (moves.paidOut !== undefined) into.paidOut += moves.paidOut
}

/** Committed and in-flight money of a ledger, summed from its entries (the entries are the truth). */
export function totalsOf(ledger: Ledger): LedgerTotals {
  // Called several times per request (rules, invariants, replies): plain loops, no entry arrays.
  const committed = zero()
  const pending = zero()
  let inFlight = 0n
  for (const e of ledger.entries) {
    if (e.state === "released") continue
    const into = e.state === "committed" ? committed : pending
    addMoves(into, e.moves)
    if (e.state === "in-flight") inFlight += e.amount
  }
  return {
    authorized: committed.authorized,
    captured: committed.captured,
    returned: committed.returned,
    holdReleased: committed.holdReleased,
    voided: committed.voided,
    chargedBack: committed.chargedBack,
    paidOut: committed.paidOut,
    pending,
    inFlight
  }
}

/** The original entry (the first), if any. */
function originalOf(ledger: Ledger): LedgerEntry | undefined {
  return ledger.entries[0]
}

/** Whether an entry of `op` is live (not released); with `inFlight`, whether one is still in flight. */
function any(ledger: Ledger, op: LedgerOp, inFlight: boolean): boolean {
  for (const e of ledger.entries) {
    if (e.op === op && (inFlight ? e.state === "in-flight" : e.state !== "released")) return true
  }
  return false
}

function flying(ledger: Ledger, op: LedgerOp): boolean {
  return any(ledger, op, true)
}

/** Whether a condition holds for a ledger. */
export function holds(condition: Condition, ledger: Ledger, t: LedgerTotals = totalsOf(ledger)): boolean {
  const original = originalOf(ledger)
  switch (condition) {
    case "started":
      return original !== undefined
    case "original-not-approved":
      return original === undefined || original.state !== "committed"
    case "voided":
      return any(ledger, "void", false)
    case "settled":
      return ledger.settled
    case "not-settled":
      return !ledger.settled
    case "capture-in-flight":
      return flying(ledger, "capture")
    case "capture-or-return-in-flight":
      return flying(ledger, "capture") || flying(ledger, "refund") || flying(ledger, "release")
    case "refunded":
      return t.returned + t.pending.returned > 0n
    case "hold-closed":
      return limitOf("open-hold", t) === 0n && t.captured + t.pending.captured === 0n && t.holdReleased + t.pending.holdReleased > 0n
    case "nothing-open":
      return limitOf("open", t) === 0n
    case "not-checked":
      return original?.op !== "payout-check" || original.state === "in-flight"
    case "check-declined":
      return original?.op === "payout-check" && original.state === "released"
    case "paid":
      return any(ledger, "payout-pay", false) || any(ledger, "payout", false)
  }
}

/** The most a limit allows now (in-flight reservations count as spent). */
export function limitOf(limit: Exclude<Limit, "given">, t: LedgerTotals): bigint {
  switch (limit) {
    case "open-hold":
      return t.authorized - t.captured - t.pending.captured - t.holdReleased - t.pending.holdReleased
    case "refundable":
      return t.captured - t.returned - t.pending.returned - t.chargedBack - t.pending.chargedBack - t.voided - t.pending.voided
    case "open":
      return limitOf("refundable", t) + limitOf("open-hold", t)
  }
}
