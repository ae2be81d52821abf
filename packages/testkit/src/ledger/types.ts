/**
 * The shapes of an order's money ledger (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger). Amounts are bigint minor units.
 * This folder is the bottom of the package: it imports nothing from the rest of the simulator.
 *
 * @packageDocumentation
 */

/** What kind of money an order holds; it decides which operations apply (see `RULES`). */
export type LedgerKind = "sale" | "rebill" | "preauth" | "transfer" | "payout" | "none"

/** The buckets committed money moves into. */
export type Bucket = "authorized" | "captured" | "returned" | "holdReleased" | "voided" | "chargedBack" | "paidOut"

/** Every bucket, in the order views show them. */
export const BUCKETS: ReadonlyArray<Bucket> = ["authorized", "captured", "returned", "holdReleased", "voided", "chargedBack", "paidOut"]

/**
 * An operation on the ledger. `sale` is the original of a sale, rebill or transfer (authorise and
 * capture at once); `verify` the original that moves no money (account verification, PAN
 * eligibility); a return is a `refund` of captured money, or a `release` of an uncaptured hold.
 */
export type LedgerOp =
  | "sale"
  | "preauth"
  | "verify"
  | "payout"
  | "payout-check"
  | "payout-pay"
  | "capture"
  | "refund"
  | "release"
  | "void"
  | "chargeback"

/** Where an entry stands: reserved while its transaction processes, then committed or released. */
export type EntryState = "in-flight" | "committed" | "released"

/** One reservation: what a transaction moves, into which buckets, and whether it happened. */
export interface LedgerEntry {
  /** The transaction this entry belongs to (its index in the order). */
  readonly tx: number
  readonly op: LedgerOp
  /** The amount the operation was accepted for. */
  readonly amount: bigint
  /** What committing adds to each bucket (a sale: authorized and captured; a void: voided and holdReleased). */
  readonly moves: Readonly<Partial<Record<Bucket, bigint>>>
  readonly state: EntryState
}

/** An order's money: immutable; every change returns a new ledger. */
export interface Ledger {
  readonly kind: LedgerKind
  /** Settled charges can no longer be voided; chargebacks need settlement. */
  readonly settled: boolean
  readonly entries: ReadonlyArray<LedgerEntry>
}

/** Committed money by bucket, money reserved by in-flight entries by bucket, and their total. */
export interface LedgerTotals extends Readonly<Record<Bucket, bigint>> {
  /** Reserved (accepted, still processing) by bucket. */
  readonly pending: Readonly<Record<Bucket, bigint>>
  /** Sum of the amounts of in-flight entries. */
  readonly inFlight: bigint
}

/** Why an operation is refused: the gateway `error-code` and a message naming the rule. */
export interface Refusal {
  readonly code: RefusalCode
  readonly message: string
}

/** Error codes the ledger refuses with (all but the internal ones are in the spec's error-code table). */
export type RefusalCode =
  | "capture-not-allowed"
  | "capture-exceeds-authorized"
  | "void-not-allowed"
  | "void-partial-not-allowed"
  | "void-in-flight"
  | "return-not-allowed"
  | "return-exceeds-charged"
  | "return-capture-in-flight"
  | "payout-not-checked"
  | "payout-check-declined"
  | "payout-already-paid"
  /** Internal: no HTTP operation reaches it (chargebacks come from the simulator itself). */
  | "chargeback-not-allowed"
  /** Internal: an original operation on an order that already has one (a simulator bug). */
  | "ledger-already-open"

/** A broken invariant (a simulator bug, never a merchant error). */
export interface Violation {
  /** Which invariant (stable id, e.g. `captures-within-authorized`). */
  readonly invariant: string
  /** What the numbers were. */
  readonly detail: string
}
