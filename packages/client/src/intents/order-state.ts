/**
 * What the gateway's `status` reply proves about money, as pure functions (no I/O, no clock):
 *
 * - {@link judge}: did this call land? It compares the order before the send with the order after,
 *   for the call's operation: only a new matching transaction or amount change proves it landed;
 *   an unchanged order proves nothing by itself (the caller adds "after the processing window").
 *   An order whose amount, currency or transaction type contradicts the request is a conflict.
 * - {@link moneyOutcome}: what happened to an order's money (voided, refunded, partly refunded,
 *   charged back), from its transaction type and amounts rather than its last status word.
 *
 * Amounts are decimal strings on the wire; here they are compared as integers of thousandths
 * (BigInt), enough for every ISO 4217 exponent, never as floats.
 *
 * @packageDocumentation
 */
import { openingTransactionTypes, operations, type OperationId } from "@paykit/contracts/operations"
import type { StatusSnapshot } from "../errors"
import type { CallOperation } from "../operations/table"

/** A decimal amount string as an integer of thousandths; `undefined` for anything that is not one. */
export function toMilli(amount: unknown): bigint | undefined {
  if (typeof amount !== "string") return undefined
  const m = /^(\d+)(?:\.(\d{1,3}))?$/.exec(amount.trim())
  if (m === null) return undefined
  return BigInt(m[1]!) * 1000n + BigInt((m[2] ?? "").padEnd(3, "0"))
}

/** Thousandths back to a decimal string with two places (three when needed). */
export function fromMilli(milli: bigint): string {
  const negative = milli < 0n
  const abs = negative ? -milli : milli
  const units = abs / 1000n
  const frac = (abs % 1000n).toString().padStart(3, "0")
  const text = `${units}.${frac.endsWith("0") ? frac.slice(0, 2) : frac}`
  return negative ? `-${text}` : text
}

const milliOr0 = (reply: StatusSnapshot | undefined, field: string): bigint => toMilli(reply?.[field]) ?? 0n

/**
 * An order's returned money as its return callbacks count it: `returned-amount` plus
 * `hold-released-amount` (a return on a preauth nothing was captured from releases the hold and shows
 * there; one return never grows both). `undefined` when status shows neither.
 */
export function returnedTotalOf(status: Readonly<Record<string, unknown>>): bigint | undefined {
  const returned = toMilli(status["returned-amount"])
  const released = toMilli(status["hold-released-amount"])
  return returned === undefined && released === undefined ? undefined : (returned ?? 0n) + (released ?? 0n)
}

/** What a status comparison concluded. */
export type Verdict =
  /** The call landed (and, where the reply shows it, with the requested amount). */
  | { readonly _tag: "Applied"; readonly after: StatusSnapshot }
  /** A new transaction of this call's type is processing; its amount is not visible yet. */
  | { readonly _tag: "Pending"; readonly after: StatusSnapshot }
  /** Nothing this call would have done is visible (no order at all when `after` is undefined). */
  | { readonly _tag: "Unchanged"; readonly after: StatusSnapshot | undefined }
  /** The order contradicts the request. */
  | {
    readonly _tag: "Conflict"
    readonly after: StatusSnapshot
    readonly field: "amount" | "currency" | "transaction-type"
    readonly expected: string
    readonly found: string
  }

/**
 * The transaction types each order-creating operation leaves on the order (spec `x-paykit-creates`);
 * none for an operation outside the spec (`request()`: docs/decisions.md#24-a-signed-escape-hatch).
 */
const CREATED_TYPE = (op: CallOperation): ReadonlyArray<string> | undefined => {
  const creates = Object.prototype.hasOwnProperty.call(operations, op) ? operations[op as OperationId].creates : undefined
  return creates === undefined || creates.length === 0 ? undefined : creates
}

/** Transaction types that open an order (a later capture or return replaces them as the last type). */
const OPENING: ReadonlySet<string> = new Set(openingTransactionTypes)
const RETURN_TYPES = new Set(["return", "reversal", "refund"])
const CAPTURE_TYPES = new Set(["capture"])
const RETURN_FIGURES = ["returned-amount", "hold-released-amount"]

/** Operations on an existing order whose effect is money (a transaction with an amount or a void). */
export const MONEY_ON_ORDER: ReadonlySet<OperationId> = new Set(["CAPTURE", "RETURN", "VOID", "PAYOUT_V4_PAY"])

function conflict(after: StatusSnapshot, field: "amount" | "currency" | "transaction-type", expected: string, found: string): Verdict {
  return { _tag: "Conflict", after, field, expected, found }
}

function checkCurrency(values: Readonly<Record<string, string>>, after: StatusSnapshot): Verdict | undefined {
  const want = values["currency"]
  const got = after["currency"]
  if (want !== undefined && typeof got === "string" && got !== want) return conflict(after, "currency", want, got)
  return undefined
}

/** Judges an order-creating call from the order found under its `client_orderid` (or none). */
function judgeCreated(op: CallOperation, values: Readonly<Record<string, string>>, after: StatusSnapshot | undefined): Verdict {
  if (after === undefined) return { _tag: "Unchanged", after }
  const wantAmount = toMilli(values["amount"])
  const gotAmount = toMilli(after["amount"])
  if (wantAmount !== undefined && gotAmount !== undefined && wantAmount !== gotAmount) {
    return conflict(after, "amount", values["amount"]!, String(after["amount"]))
  }
  const currency = checkCurrency(values, after)
  if (currency !== undefined) return currency
  const type = after["transaction-type"]
  const expected = CREATED_TYPE(op)
  if (expected !== undefined && typeof type === "string") {
    if (OPENING.has(type)) {
      if (!expected.includes(type)) return conflict(after, "transaction-type", expected.join(" or "), type)
    } else {
      // A follow-up is the last transaction (an older order under this client_orderid was captured,
      // refunded, voided): its opening type is not shown, but only a preauth is captured, and only a
      // preauth order reports `captured-amount`. Without this a sale matched a captured preauth.
      const preauthOrder = type === "capture" || after["captured-amount"] !== undefined
      const wantsPreauth = expected.includes("preauth")
      if (preauthOrder && !wantsPreauth) return conflict(after, "transaction-type", expected.join(" or "), `preauth (last transaction ${type})`)
      if (!preauthOrder && expected.length === 1 && wantsPreauth) return conflict(after, "transaction-type", "preauth", `not a preauth (last transaction ${type})`)
    }
  }
  return { _tag: "Applied", after }
}

/** An amount-moving call on an existing order: the matching amount figure must grow by the requested amount. */
function judgeAmount(
  values: Readonly<Record<string, string>>,
  before: StatusSnapshot,
  after: StatusSnapshot,
  figures: ReadonlyArray<string>,
  types: ReadonlySet<string>,
  fullAmount: bigint
): Verdict {
  const currency = checkCurrency(values, after)
  if (currency !== undefined) return currency
  const expected = toMilli(values["amount"]) ?? fullAmount
  let delta = 0n
  for (const figure of figures) delta += milliOr0(after, figure) - milliOr0(before, figure)
  if (delta === expected && delta > 0n) return { _tag: "Applied", after }
  if (delta > 0n) return conflict(after, "amount", fromMilli(expected), fromMilli(delta))
  const type = after["transaction-type"]
  const isNew = typeof type === "string" && types.has(type) &&
    (before["transaction-type"] !== type || before.status !== after.status)
  if (isNew) {
    // A new transaction of our type: processing → landed, amount not yet visible; final without an
    // amount change → it landed and failed (or this gateway does not report the figure).
    return after.status === "processing" ? { _tag: "Pending", after } : { _tag: "Applied", after }
  }
  return { _tag: "Unchanged", after }
}

const SNAPSHOT_FIELDS = ["status", "transaction-type", "order-stage", "redirect-to", "card-ref-id", "captured-amount", "returned-amount"]

/**
 * Did the call land? `before` is the order before the send (`undefined` for an order-creating call),
 * `after` the order now (`undefined` when the gateway has no such order).
 */
export function judge(
  op: CallOperation,
  values: Readonly<Record<string, string>>,
  before: StatusSnapshot | undefined,
  after: StatusSnapshot | undefined
): Verdict {
  if (before === undefined) return judgeCreated(op, values, after)
  if (after === undefined) return { _tag: "Unchanged", after }
  switch (op) {
    case "CAPTURE":
      return judgeAmount(values, before, after, ["captured-amount"], CAPTURE_TYPES, milliOr0(before, "amount") - milliOr0(before, "captured-amount"))
    case "RETURN": {
      // A return on a preauth nothing was captured from releases the hold instead of refunding:
      // it shows in `hold-released-amount`, not `returned-amount` (the two never grow for one return).
      const captured = milliOr0(before, "captured-amount")
      const left = captured > 0n
        ? captured - milliOr0(before, "returned-amount")
        : milliOr0(before, "amount") - milliOr0(before, "returned-amount") - milliOr0(before, "hold-released-amount")
      return judgeAmount(values, before, after, RETURN_FIGURES, RETURN_TYPES, left)
    }
    case "VOID":
      return after["transaction-type"] === "void" && before["transaction-type"] !== "void" ? { _tag: "Applied", after } : { _tag: "Unchanged", after }
    case "PAYOUT_V4_PAY":
      return after["transaction-type"] === "payout" && before["transaction-type"] !== "payout" ? { _tag: "Applied", after } : { _tag: "Unchanged", after }
    default:
      // 3DS uploads and card references: any change of the order's stage proves the call was processed.
      return SNAPSHOT_FIELDS.some((f) => before[f] !== after[f]) ? { _tag: "Applied", after } : { _tag: "Unchanged", after }
  }
}

/** What happened to an order's money, beyond its last status word. */
export type MoneyOutcome =
  | "approved"
  | "declined"
  | "filtered"
  | "error"
  | "voided"
  | "refunded"
  | "partially-refunded"
  | "charged-back"

/**
 * The money outcome of a final order: a void, a chargeback, full or partial returns are reported as
 * such; otherwise the status word. A failed follow-up (a declined capture or return) leaves the
 * order's money where it was, so it reads from the amounts, not the last transaction's status.
 */
export function moneyOutcome(reply: StatusSnapshot): MoneyOutcome {
  const type = reply["transaction-type"]
  const status = reply.status as MoneyOutcome
  // A chargeback stays the money's story even when a later transaction is the last one (docs/decisions.md#17-chargebacks).
  if (type === "chargeback" || milliOr0(reply, "chargeback-amount") > 0n) return "charged-back"
  if (type === "void" && reply.status === "approved") return "voided"
  const captured = milliOr0(reply, "captured-amount")
  // On a preauth nothing was captured from, a return releases the hold (`hold-released-amount`).
  const returned = milliOr0(reply, "returned-amount") + (captured > 0n ? 0n : milliOr0(reply, "hold-released-amount"))
  if (returned > 0n) {
    const charged = captured > 0n ? captured : milliOr0(reply, "amount")
    return returned >= charged ? "refunded" : "partially-refunded"
  }
  if (typeof type === "string" && !OPENING.has(type) && (status === "declined" || status === "error")) return "approved"
  return status
}
