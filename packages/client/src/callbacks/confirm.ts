/**
 * Confirming a callback's money claims (`type`, `amount`, `currency`) against the gateway's current
 * `status` of the order, as a pure function. A claim is confirmed only when the order shows it:
 *
 * - an opening transaction (`sale`, `preauth`, `rebill`, `payout`, `transfer`, ...): the amount is the
 *   order's amount, and when the order's last transaction is an opening one it is this type;
 * - `capture`: an approved capture's amount is within the order's `captured-amount`;
 * - `reversal`/`return`/`refund`: an approved return's amount is within `returned-amount` plus
 *   `hold-released-amount` (a return on an uncaptured preauth releases the hold);
 *   for these two, "within the total" is only a first filter: the callback handler then proves the
 *   claim by one specific transaction (`callback-transactions`);
 * - `void`: the order's last transaction is the void;
 * - `chargeback`: the order shows the chargeback (`transaction-type: chargeback`); the handler then
 *   proves it by the order's `chargeback-amount` (`proveChargeback` in `callback-transactions`);
 * - the currency, when claimed, is the order's.
 *
 * Anything else is not confirmed. A replayed callback with a changed amount or type therefore never
 * reaches the merchant's handler as confirmed (with the transaction proof for captures and returns).
 *
 * @packageDocumentation
 */
import type { Callback, CallbackType } from "./verify"
import type { StatusSnapshot } from "../errors"
import { returnedTotalOf, toMilli } from "../intents/order-state"

/** Why a claim was not confirmed. */
export interface ClaimMismatch {
  /** The claim: `type`, `amount`, `currency` or `orderid`. */
  readonly field: string
  /** `contradicted` when status shows something else, `unconfirmable` when status cannot show it (yet). */
  readonly kind: "contradicted" | "unconfirmable"
}

const OPENING = new Set(["sale", "preauth", "rebill", "payout", "transfer", "account-verification"])
const RETURNS = new Set(["reversal", "return", "refund"])

const within = (claimed: bigint, figure: unknown): boolean => {
  const total = toMilli(figure)
  return total !== undefined && claimed <= total && claimed > 0n
}

/** `undefined` when the claims are confirmed by `status`, else the first mismatch. */
export function confirmClaims(cb: Callback, status: StatusSnapshot): ClaimMismatch | undefined {
  if (String(status["paynet-order-id"]) !== cb.orderid) return { field: "orderid", kind: "contradicted" }
  const type = cb.claims.type as CallbackType | undefined
  const amount = toMilli(cb.claims.amount)
  if (type === undefined) return { field: "type", kind: "unconfirmable" }
  if (amount === undefined) return { field: "amount", kind: "unconfirmable" }
  const currency = cb.claims.currency
  if (currency !== undefined && typeof status["currency"] === "string" && currency !== status["currency"]) {
    return { field: "currency", kind: "contradicted" }
  }
  const lastType = status["transaction-type"]
  const approved = cb.status === "approved"
  if (OPENING.has(type)) {
    if (typeof lastType === "string" && OPENING.has(lastType) && lastType !== type) return { field: "type", kind: "contradicted" }
    const orderAmount = toMilli(status["amount"])
    if (orderAmount === undefined) return { field: "amount", kind: "unconfirmable" }
    // An account verification moves nothing: its callback carries 0 or the order's amount.
    if (amount !== orderAmount && !(type === "account-verification" && amount === 0n)) return { field: "amount", kind: "contradicted" }
    return undefined
  }
  if (type === "capture") {
    if (!approved) return within(amount, status["amount"]) ? undefined : { field: "amount", kind: "contradicted" }
    return within(amount, status["captured-amount"]) ? undefined : { field: "amount", kind: "contradicted" }
  }
  if (RETURNS.has(type)) {
    if (!approved) return within(amount, status["amount"]) ? undefined : { field: "amount", kind: "contradicted" }
    const total = returnedTotalOf(status)
    return total !== undefined && amount > 0n && amount <= total ? undefined : { field: "amount", kind: "contradicted" }
  }
  if (type === "void") {
    if (lastType !== "void") return { field: "type", kind: "contradicted" }
    return amount <= (toMilli(status["amount"]) ?? 0n) ? undefined : { field: "amount", kind: "contradicted" }
  }
  if (type === "chargeback") {
    if (lastType !== "chargeback") return { field: "type", kind: "unconfirmable" }
    return amount <= (toMilli(status["amount"]) ?? 0n) ? undefined : { field: "amount", kind: "contradicted" }
  }
  return { field: "type", kind: "unconfirmable" }
}
