/**
 * What every operation handler gets, and helpers they share: reply shapes, order lookup,
 * client_orderid idempotency and card intake.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import type { Engine } from "../engine/engine"
import type { Merchant } from "../auth/merchant"
import type { Fields } from "../http/validation"
import { ledgerKindOf, StoredOrder, type Order, type OrderKind } from "../state/orders"
import { openLedger } from "../ledger/index"
import { SimError, serialNumber } from "../http/replies"
import { cardData, fullYear, type CardData } from "../rules/cards"
import { intern, internCard, internOptional, knownCard } from "../state/compact"
import { own } from "../http/own"

/** A verified request. */
export interface OpContext {
  readonly engine: Engine
  readonly operationId: OperationId
  readonly merchant: Merchant
  /** The path's endpoint or group id, as decimal digits (int64, docs/decisions.md#d16i-int64-endpoint-ids). */
  readonly endpointId: string
  readonly fields: Fields
}

/** A 200 reply body (kebab-case names, string values). */
export type Reply = Record<string, string>

/** An operation handler. */
export type Handler = (ctx: OpContext) => Reply

/** An AsyncResponse for an order. */
export function asyncReply(order: Order, status: string = order.status, extra?: Reply): Reply {
  // A reply that carries its transaction's serial-number does not draw one to overwrite.
  const reply = asyncReplyWithSerial(order, status, extra?.["serial-number"] ?? serialNumber())
  return extra === undefined ? reply : Object.assign(reply, extra)
}

/**
 * {@link asyncReply} with its transaction's serial-number and no other extra field, built at once
 * (no extra object merged in on every sale). The one place the AsyncResponse's fields are listed.
 */
export function asyncReplyWithSerial(order: Order, status: string, serial: string): Reply {
  return {
    type: "async-response",
    status,
    "serial-number": serial,
    "merchant-order-id": order.clientOrderId,
    "paynet-order-id": order.orderid,
    "end-point-id": order.endpointId
  }
}

/**
 * The merchant's order named by orderid (and client_orderid, which must then match), or by
 * client_orderid alone when `orderid` is absent. Unknown → order-not-found.
 */
export function findOrder(ctx: OpContext, orderid: string | undefined, clientOrderId: string | undefined): Order {
  const { engine, merchant } = ctx
  const order = orderid !== undefined
    ? engine.store.get(orderid)
    : clientOrderId === undefined ? undefined : engine.store.byClientOrderId(merchant.login, clientOrderId)
  if (order === undefined || order.login !== merchant.login || (clientOrderId !== undefined && order.clientOrderId !== clientOrderId)) {
    throw new SimError("order-not-found", `orderid: no order ${orderid ?? ""} with client_orderid ${clientOrderId ?? ""} for this merchant`.replace(/ {2,}/g, " "), clientOrderId)
  }
  return order
}

/**
 * client_orderid idempotency: the same request again gets the same order (never a second charge)
 * and a reply of the first one's shape that tells the order's current state
 * (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger); a different request under the same client_orderid is client-orderid-conflict.
 */
export function replayIfRepeated(ctx: OpContext, clientOrderId: string, fingerprint: string): Reply | undefined {
  const existing = ctx.engine.store.byClientOrderId(ctx.merchant.login, clientOrderId)
  if (existing === undefined) return undefined
  if (existing.fingerprint !== fingerprint || existing.reply === undefined) {
    throw new SimError("client-orderid-conflict", `client_orderid: ${clientOrderId} is already used by a different request`, clientOrderId)
  }
  return currentReply(existing, existing.reply)
}

/** The first reply's shape with the order's current status (and its error, once final and not approved). */
export function currentReply(order: Order, first: Reply): Reply {
  const reply: Reply = { ...first, status: order.status, "serial-number": serialNumber() }
  delete reply["error-code"]
  delete reply["error-message"]
  // A 3DS redirect is only worth following while the order still waits for it.
  if (reply["type"] === "async-response" && order.status !== "processing") delete reply["redirect-url"]
  // Only the plain AsyncResponse has error fields (not the form or recurring-payment replies).
  const plain = reply["type"] === "async-response" && reply["recurring-payment-id"] === undefined
  if (plain && order.status !== "approved" && order.status !== "processing") {
    if (order.errorCode !== undefined) reply["error-code"] = order.errorCode
    if (order.errorMessage !== undefined) reply["error-message"] = order.errorMessage.slice(0, 1024)
  }
  return reply
}

/** Card fields of a request, by their wire names. */
interface CardFieldNames {
  readonly pan: string
  readonly month: string
  readonly year: string
  readonly holder: string
}

/** The usual (underscore) card field names. */
const CARD_FIELDS: CardFieldNames = { pan: "credit_card_number", month: "expire_month", year: "expire_year", holder: "card_printed_name" }

/** Reduces the request's card to {@link CardData}; the PAN stays only in this call. */
export function takeCard(ctx: OpContext, names: CardFieldNames = CARD_FIELDS): { card: CardData; pan: string } | undefined {
  const fields = ctx.fields
  const pan = fields[names.pan]
  if (pan === undefined) return undefined
  const month = fields[names.month] ?? "01"
  const year = fields[names.year] ?? "2099"
  const holder = fields[names.holder]
  const fingerprint = ctx.engine.fingerprint(pan, ctx.merchant.controlKey)
  // A card seen before (a sandbox charges the same test cards over and over) is its shared record.
  const card = knownCard(fingerprint, month, fullYear(year), holder) ?? cardData(pan, month, year, holder, fingerprint)
  return { card, pan }
}

/** Creates and stores a new order. */
export function newOrder(
  ctx: OpContext,
  init: {
    kind: OrderKind
    clientOrderId: string
    currency: string
    amount: bigint
    amountText: string
    fingerprint: string
    card?: CardData | undefined
    outcome: Order["outcome"]
  }
): Order {
  const { engine, fields } = ctx
  // Every string kept is copied out of the request body or shared with other orders (state/compact).
  const order: Order = new StoredOrder({
    orderid: engine.store.newOrderId(),
    clientOrderId: own(init.clientOrderId),
    login: ctx.merchant.login,
    controlKey: ctx.merchant.controlKey,
    endpointId: intern(ctx.endpointId),
    kind: init.kind,
    operation: ctx.operationId,
    currency: intern(init.currency),
    amount: init.amount,
    amountText: intern(init.amountText),
    status: "processing",
    outcome: init.outcome,
    ledger: openLedger(ledgerKindOf(init.kind)),
    fingerprint: intern(init.fingerprint),
    transactions: [],
    createdAt: engine.clock.now()
  })
  if (init.card !== undefined) order.card = internCard(init.card)
  const email = internOptional(fields["email"])
  if (email !== undefined) order.email = email
  const redirect = internOptional(fields["redirect_url"])
  if (redirect !== undefined) order.redirectUrl = redirect
  const callback = internOptional(fields["server_callback_url"])
  if (callback !== undefined) order.serverCallbackUrl = callback
  const data = fields["merchant_data"]
  if (data !== undefined) order.merchantData = own(data)
  engine.store.add(order)
  return order
}
