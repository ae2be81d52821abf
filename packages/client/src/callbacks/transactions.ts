/**
 * Proving a `capture` or `return` (`reversal`, `refund`) callback by one specific transaction of the
 * order. Plain `status` shows only the order's totals, so "5.00 is within the returned 8.00" would
 * confirm a forged or replayed callback with a changed amount, and a second "5.00" after one real
 * 5.00 return. So a capture/return callback is confirmed only when:
 *
 * 1. **a transaction this client made proves it**: the calls this client (or, with a shared store,
 *    its fleet) made on the order of this kind left the `serial-number`s of their replies; `status`
 *    with `by-request-sn` answers each one's status, type, amount, `approval-code` and
 *    `processor-rrn`. One must have the callback's signed status, its type, exactly its amount, and
 *    the `approval-code`/`processor-rrn` the callback carries; and it must not have vouched for
 *    another delivery before: the transaction is claimed in the callback claim store (atomically,
 *    like the callback itself), so two genuine equal returns are delivered once each and a third
 *    callback claiming the same amount never is; or
 * 2. **the order's totals prove it**, when no known transaction matches and none of this client's
 *    calls of that kind is still running (one that is may yet name its transaction): the callback
 *    says `approved`, the order's last transaction is of that kind and not one of the known ones
 *    (and has the callback's `approval-code`/`processor-rrn` when both show them), and the amount
 *    is exactly what the known approved transactions leave of the order's `captured-amount` /
 *    `returned-amount`. This covers a capture or return made in the gateway's back office and one
 *    of this client's calls that ended without its reply (reconciled or recovered: no serial
 *    number). It is claimed once per order and kind, so what the merchant receives never exceeds
 *    the order's total: the known transactions once each, plus at most one remainder. This relies
 *    on a finished call never learning its serial number later (`OrderCall.running`).
 *
 * Anything else is not proven: a claim a transaction already vouched for is contradicted (403); a
 * transaction still processing, a call still running, a second transaction no serial number names,
 * or an earlier one than the order's last is unconfirmed (500: the gateway keeps retrying and the
 * merchant reads `status`).
 *
 * A **`chargeback`** callback is proven by the order's chargeback total only ({@link proveChargeback}):
 * the gateway makes chargebacks, so no call of this client has a serial number for one.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Callback } from "./verify"
import type { CallError } from "../errors"
import type { OrderCall } from "../intents/ledger"
import type { StatusReply } from "../operations/table"
import { returnedTotalOf, toMilli } from "../intents/order-state"

/** The two kinds of callback proven by a transaction. */
type TransactionKind = "capture" | "return"

const RETURNS = new Set(["reversal", "return", "refund"])

/** The kind of a callback `type` that must be proven by a transaction, or `undefined`. */
export function transactionKindOf(type: string | undefined): TransactionKind | undefined {
  return type === "capture" ? "capture" : type !== undefined && RETURNS.has(type) ? "return" : undefined
}

const OPERATION: Record<TransactionKind, string> = { capture: "CAPTURE", return: "RETURN" }
const isKind = (kind: TransactionKind, txType: unknown) =>
  typeof txType === "string" && (kind === "capture" ? txType === "capture" : RETURNS.has(txType))
const PER_TRANSACTION = ["approval-code", "processor-rrn"] as const

/** Gives back a claim taken only to look (the handler's `CallbackClaimStore.release`, failures ignored). */
export type ReleaseClaim = (key: string) => Effect.Effect<void>

/** `status` of one transaction of an order, by its serial number (`by-request-sn`). */
export type TransactionLookup = (query: { client_orderid: string; orderid: string; "by-request-sn": string }) => Effect.Effect<StatusReply, CallError>

/** Claims as the handler makes them (`CallbackClaimStore.claim`, failures already turned into `Left`). */
export type ClaimOnce = (key: string) => Effect.Effect<"claimed" | "running-elsewhere" | "done", "store-failed">

/** What proving a callback by a transaction found. */
export type TransactionProof =
  | {
    /** Proven: `claimKey` is held now; complete it with the callback, release it on failure. */
    readonly _tag: "Proven"
    /** The claim this proof holds. */
    readonly claimKey: string
    /** Further claims it holds (a chargeback's end of total), completed after `claimKey`, released with it. */
    readonly moreKeys?: ReadonlyArray<string> | undefined
    /** The proving transaction's serial number (`undefined` when the totals proved it). */
    readonly serialNumber: string | undefined
  }
  | {
    /** Not proven: the handler answers 403 for `contradicted`, 500 for the rest. */
    readonly _tag: "NotProven"
    /** `contradicted` (403), `unconfirmed`, `running-elsewhere`, `status-failed`, `store-failed` (500). */
    readonly reason: "contradicted" | "unconfirmed" | "running-elsewhere" | "status-failed" | "store-failed"
    /** Detail for the span (`transaction-vouched`, `call-running`, `not-the-remainder`, ...). */
    readonly detail: string
  }

type Match = "match" | "pending" | "no"

/** Whether transaction `tx` (a `by-request-sn` reply) is the one the callback claims. */
function matches(cb: Callback, kind: TransactionKind, amount: bigint, tx: Record<string, unknown>): Match {
  if (String(tx["paynet-order-id"]) !== cb.orderid || !isKind(kind, tx["transaction-type"])) return "no"
  if (toMilli(tx["amount"]) !== amount) return "no"
  if (tx["status"] === "processing" && cb.status !== "processing") return "pending"
  if (tx["status"] !== cb.status) return "no"
  for (const field of PER_TRANSACTION) {
    const claimed = cb.claims[field]
    if (claimed === undefined) continue
    const shown = tx[field]
    // An approved transaction shows both (docs/decisions.md#d7r-status-by-request-serial-number); one that shows another value is another one.
    if (shown === undefined ? tx["status"] === "approved" : String(shown) !== claimed) return "no"
  }
  return "match"
}

const notProven = (reason: Extract<TransactionProof, { _tag: "NotProven" }>["reason"], detail: string): TransactionProof => ({ _tag: "NotProven", reason, detail })

/** The claim key of one transaction's vouching. */
const transactionClaimKey = (orderid: string, serialNumber: string) => `paykit-transaction|${orderid}|${serialNumber}`
/** The claim key of the once-per-order-and-kind proof from totals. */
const totalsClaimKey = (orderid: string, kind: TransactionKind) => `paykit-order-total|${orderid}|${kind}`

/**
 * Proves a capture/return callback (see the module notes). `current` is the order's plain `status`
 * reply, `calls` this client's calls on the order.
 */
export function proveTransaction(
  cb: Callback,
  kind: TransactionKind,
  current: StatusReply,
  calls: ReadonlyArray<OrderCall>,
  lookup: TransactionLookup,
  claim: ClaimOnce
): Effect.Effect<TransactionProof> {
  return Effect.gen(function*() {
    const amount = toMilli(cb.claims.amount)
    if (amount === undefined) return notProven("contradicted", "amount")
    const ours = calls.filter((c) => c.operation === OPERATION[kind])
    const serials = [...new Set(ours.flatMap((c) => (c.serialNumber === undefined ? [] : [c.serialNumber])))]
    let busy = false
    let vouched = false
    let pending = false
    // What this client's known transactions of this kind account for, and their approval codes.
    let accounted = 0n
    const knownCodes = new Set<string>()
    for (const sn of serials) {
      const reply = yield* Effect.either(lookup({ client_orderid: cb.client_orderid, orderid: cb.orderid, "by-request-sn": sn }))
      if (Either.isLeft(reply)) {
        const e = reply.left
        // Not one of this order's transactions (a serial from another order cannot prove this one).
        if (e._tag === "GatewayValidationError" && e.errorCode === "transaction-not-found") continue
        return notProven("status-failed", "by-request-sn")
      }
      const tx = reply.right as unknown as Record<string, unknown>
      if (isKind(kind, tx["transaction-type"]) && tx["status"] === "approved") accounted += toMilli(tx["amount"]) ?? 0n
      if (tx["approval-code"] !== undefined) knownCodes.add(String(tx["approval-code"]))
      const m = matches(cb, kind, amount, tx)
      if (m === "pending") pending = true
      if (m !== "match") continue
      const key = transactionClaimKey(cb.orderid, sn)
      const c = yield* Effect.either(claim(key))
      if (Either.isLeft(c)) return notProven("store-failed", "transaction-claim")
      if (c.right === "claimed") return { _tag: "Proven", claimKey: key, serialNumber: sn }
      if (c.right === "done") vouched = true
      else busy = true
    }
    if (busy) return notProven("running-elsewhere", "transaction-claimed-elsewhere")
    if (pending) return notProven("unconfirmed", "transaction-processing")
    // Every transaction that matches has vouched for another delivery: this one adds nothing.
    if (vouched) return notProven("contradicted", "transaction-vouched")
    // A call still out may yet name its transaction: the totals must not vouch for it first.
    if (ours.some((c) => c.running)) return notProven("unconfirmed", "call-running")
    return yield* proveByTotals(cb, kind, amount, current, accounted, knownCodes, claim)
  })
}

/**
 * No known transaction matches: the order's totals may prove one transaction that no serial number
 * names (made in the back office, or by a call of this client that ended without its reply), once
 * per order and kind: the callback must be for the order's last transaction (not one of the known
 * ones) and for exactly what the known transactions leave of the total.
 */
function proveByTotals(
  cb: Callback,
  kind: TransactionKind,
  amount: bigint,
  current: StatusReply,
  accounted: bigint,
  knownCodes: ReadonlySet<string>,
  claim: ClaimOnce
): Effect.Effect<TransactionProof> {
  return Effect.gen(function*() {
    const status = current as unknown as Record<string, unknown>
    if (cb.status !== "approved") return notProven("unconfirmed", "no-transaction-known")
    if (!isKind(kind, status["transaction-type"])) return notProven("unconfirmed", "last-transaction-other")
    if (status["approval-code"] !== undefined && knownCodes.has(String(status["approval-code"]))) return notProven("unconfirmed", "last-transaction-known")
    const total = kind === "capture" ? toMilli(status["captured-amount"]) : returnedTotalOf(status)
    if (total === undefined || total - accounted !== amount) return notProven("unconfirmed", "not-the-remainder")
    for (const field of PER_TRANSACTION) {
      const claimed = cb.claims[field]
      const shown = status[field]
      if (claimed !== undefined && shown !== undefined && String(shown) !== claimed) return notProven("unconfirmed", field)
    }
    const key = totalsClaimKey(cb.orderid, kind)
    const c = yield* Effect.either(claim(key))
    if (Either.isLeft(c)) return notProven("store-failed", "totals-claim")
    if (c.right === "claimed") return { _tag: "Proven", claimKey: key, serialNumber: undefined }
    return c.right === "done" ? notProven("contradicted", "totals-vouched") : notProven("running-elsewhere", "totals-claimed-elsewhere")
  })
}

/**
 * The claim keys of a vouched chargeback callback: `to` marks the order's `chargeback-amount` reached
 * (`milli`: thousandths of the major unit), `from` a vouched chargeback starting at that total.
 */
const chargebackClaimKey = (orderid: string, end: "from" | "to", milli: bigint) => `paykit-chargeback|${orderid}|${end}|${milli}`

/**
 * Proves a `chargeback` callback by the order's `chargeback-amount` (the total charged back so far):
 * the gateway makes chargebacks, so no serial number of this client names one, and `status` shows
 * only that total. So the callback is proven only when:
 *
 * - it says `approved`, and the order's last transaction is a chargeback (`transaction-type`) whose
 *   `approval-code`/`processor-rrn` (when status and callback both show them) are the callback's;
 * - its amount is exactly what earlier vouched chargeback callbacks leave of `chargeback-amount`
 *   `T`: vouched callbacks form a chain of segments `[from, to)` of the total in the claim store
 *   ({@link chargebackClaimKey}), each starting where the one before ended (or at zero) and ending at
 *   the total of its time. This callback's segment `[T - amount, T)` must start at the chain's end:
 *   the `to` key of its start is done (or it starts at zero), and no segment starts there yet.
 *
 * It then holds `from|T-amount` and `to|T`, completed with the callback (`from` first: a lost `to`
 * only leaves a later chargeback unprovable). One chargeback is thus delivered once and a forged
 * variant with another amount or approval code never: once the total is vouched for, every other
 * chargeback claim on the order is contradicted (403); one the chain cannot reach (an unvouched
 * earlier chargeback, a forged smaller amount before the genuine one) is unconfirmed (500). What the
 * merchant receives never exceeds `chargeback-amount`. Several chargebacks on one order (the
 * simulator's test route makes partial ones) are proven in order as they are delivered; two whose
 * callbacks both arrive only after the second was made cannot be told apart from the total and stay
 * unconfirmed (the merchant reads `chargeback-amount`).
 */
export function proveChargeback(cb: Callback, current: StatusReply, claim: ClaimOnce, release: ReleaseClaim): Effect.Effect<TransactionProof> {
  return Effect.gen(function*() {
    const status = current as unknown as Record<string, unknown>
    const amount = toMilli(cb.claims.amount)
    const total = toMilli(status["chargeback-amount"])
    if (amount === undefined || amount <= 0n) return notProven("contradicted", "amount")
    if (cb.status !== "approved") return notProven("unconfirmed", "chargeback-not-approved")
    if (status["transaction-type"] !== "chargeback" || total === undefined) return notProven("unconfirmed", "no-chargeback-shown")
    if (amount > total) return notProven("contradicted", "beyond-chargeback-amount")
    const start = total - amount
    const held: Array<string> = []
    const take = (key: string) => Effect.tap(Effect.either(claim(key)), (c) => Effect.sync(() => Either.isRight(c) && c.right === "claimed" && held.push(key)))
    // Every way out but `Proven` gives back what was taken.
    const giveBack = (reason: "contradicted" | "unconfirmed" | "running-elsewhere" | "store-failed", detail: string) =>
      Effect.as(Effect.forEach(held, release, { discard: true }), notProven(reason, detail))
    const end = yield* take(chargebackClaimKey(cb.orderid, "to", total))
    if (Either.isLeft(end)) return notProven("store-failed", "chargeback-claim")
    if (end.right === "done") return notProven("contradicted", "chargebacks-vouched")
    if (end.right === "running-elsewhere") return notProven("running-elsewhere", "chargeback-claimed-elsewhere")
    for (const field of PER_TRANSACTION) {
      const claimed = cb.claims[field]
      const shown = status[field]
      if (claimed !== undefined && shown !== undefined && String(shown) !== claimed) return yield* giveBack("unconfirmed", field)
    }
    const from = yield* take(chargebackClaimKey(cb.orderid, "from", start))
    if (Either.isLeft(from)) return yield* giveBack("store-failed", "chargeback-claim")
    // A vouched chargeback starts where this one would: the chain is past it, this one overlaps.
    if (from.right === "done") return yield* giveBack("contradicted", "chargeback-overlaps")
    if (from.right === "running-elsewhere") return yield* giveBack("running-elsewhere", "chargeback-claimed-elsewhere")
    if (start > 0n) {
      // Has the chain reached `start`? Only a completed key says so; one taken just to look is given back.
      const reached = yield* take(chargebackClaimKey(cb.orderid, "to", start))
      if (Either.isLeft(reached)) return yield* giveBack("store-failed", "chargeback-claim")
      if (reached.right === "claimed") return yield* giveBack("unconfirmed", "not-the-remainder")
      if (reached.right === "running-elsewhere") return yield* giveBack("running-elsewhere", "chargeback-claimed-elsewhere")
    }
    return { _tag: "Proven", claimKey: chargebackClaimKey(cb.orderid, "from", start), moreKeys: [chargebackClaimKey(cb.orderid, "to", total)], serialNumber: undefined }
  })
}
