/**
 * Payouts (one-step, and check-then-pay), card-to-card transfers and PAN eligibility.
 *
 * @packageDocumentation
 */
import { SimError } from "../replies"
import { cardData, finalOf, outcomeFor, type CardData } from "../cards"
import type { Fields } from "../validation"
import { rebillOutcome } from "./payments"
import { asyncReply, currentReply, findOrder, newOrder, replayIfRepeated, takeCard, type Handler, type OpContext } from "./context"

const DESTINATIONS = ["credit_card_number", "account_number", "destination_phone"] as const

/** A payout names exactly one destination; none or several → payout-destination. */
export function payoutDestination(fields: Fields): { key: string; pan?: string } {
  const named = DESTINATIONS.filter((name) => fields[name] !== undefined)
  if (named.length !== 1) {
    throw new SimError("payout-destination", `destination: exactly one of ${DESTINATIONS.join(", ")} is required (got ${named.length})`, fields["client_orderid"])
  }
  const name = named[0]!
  const value = fields[name]!
  return name === "credit_card_number" ? { key: `card`, pan: value } : { key: `${name}:${value}` }
}

function registerPayout(ctx: OpContext, checked: boolean) {
  const { engine, fields } = ctx
  const destination = payoutDestination(fields)
  const clientOrderId = fields["client_orderid"]!
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  const taken = takeCard(ctx)
  const destKey = taken === undefined ? destination.key : taken.card.fingerprint
  const fingerprint = `payout${checked ? "-check" : ""}|${amount}|${currency}|${destKey}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return { repeated }
  const outcome = rebillOutcome(outcomeFor(destination.pan, undefined), fields["amount"])
  const order = newOrder(ctx, { kind: "payout", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card: taken?.card, outcome })
  return { order }
}

const payout: Handler = (ctx) => {
  const { repeated, order } = registerPayout(ctx, false)
  if (repeated !== undefined) return repeated
  const tx = ctx.engine.accept(order!, "payout", "payout", order!.amount)
  ctx.engine.scheduleFinal(order!, tx, order!.outcome)
  order!.reply = asyncReply(order!, "processing")
  return order!.reply
}

/**
 * The check validates the recipient at once: a destination that would decline, fail or be filtered
 * ends the order with that status. An approved check registers the payout and moves no money: the
 * order stays processing (not final) until payout-pay (DESIGN.md decision 10).
 */
const payoutCheck: Handler = (ctx) => {
  const { repeated, order } = registerPayout(ctx, true)
  if (repeated !== undefined) return repeated
  const { engine } = ctx
  const tx = engine.accept(order!, "payout-check", "payout-check")
  const final = finalOf(order!.outcome)
  if (final.status === "approved") {
    engine.recordOutcome(order!, tx, true)
    tx.status = "approved"
    order!.status = "processing"
  } else {
    engine.finalize(order!, tx, final)
  }
  order!.reply = currentReply(order!, asyncReply(order!, order!.status))
  return order!.reply
}

const payoutPay: Handler = (ctx) => {
  const order = findOrder(ctx, ctx.fields["orderid"], ctx.fields["client_orderid"])
  const tx = ctx.engine.accept(order, "payout-pay", "payout", order.amount)
  ctx.engine.scheduleFinal(order, tx, order.outcome)
  return asyncReply(order, "processing")
}

function refCard(ctx: OpContext, field: string): CardData | undefined {
  const id = ctx.fields[field]
  if (id === undefined) return undefined
  const ref = ctx.engine.cardRefs.get(id)
  if (ref === undefined || ref.login !== ctx.merchant.login) {
    throw new SimError("card-ref-not-found", `${field}: no card reference ${id}`, ctx.fields["client-order-id"] ?? ctx.fields["client_orderid"])
  }
  return ref.card
}

const transfer: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client_orderid"]!
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  const taken = takeCard(ctx)
  const destination = fields["destination-card-no"]
  if (taken === undefined && fields["card_recurring_payment_id"] === undefined) {
    throw new SimError("invalid-field", "credit_card_number: a source card (or card_recurring_payment_id) is required", clientOrderId)
  }
  if (destination === undefined && fields["destination_card_recurring_payment_id"] === undefined) {
    throw new SimError("invalid-field", "destination-card-no: a destination card (or destination_card_recurring_payment_id) is required", clientOrderId)
  }
  const destFp = destination === undefined ? fields["destination_card_recurring_payment_id"]! : engine.fingerprint(destination, ctx.merchant.controlKey)
  const fingerprint = `transfer|${amount}|${currency}|${taken?.card.fingerprint ?? fields["card_recurring_payment_id"]}|${destFp}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  const outcome = outcomeFor(taken?.pan, fields["amount"])
  const order = newOrder(ctx, { kind: "transfer", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card: taken?.card, outcome: outcome === "threeds-challenge" ? "approved" : outcome })
  const tx = engine.accept(order, "sale", "transfer", amount)
  engine.scheduleFinal(order, tx, order.outcome)
  order.reply = asyncReply(order, "processing")
  return order.reply
}

const transferByRef: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client-order-id"]!
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  const source = refCard(ctx, "source-card-ref-id")
  if (source === undefined) throw new SimError("invalid-field", "source-card-ref-id: is missing", clientOrderId)
  const destRef = refCard(ctx, "destination-card-ref-id")
  const destination = fields["destination-card-no"]
  if ((destRef === undefined) === (destination === undefined)) {
    throw new SimError("invalid-field", "destination-card-no: exactly one of destination-card-no and destination-card-ref-id is required", clientOrderId)
  }
  const destFp = destRef?.fingerprint ?? engine.fingerprint(destination!, ctx.merchant.controlKey)
  const fingerprint = `transfer-by-ref|${amount}|${currency}|${source.fingerprint}|${destFp}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  const order = newOrder(ctx, { kind: "transfer", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card: source, outcome: rebillOutcome(source.outcome, fields["amount"]) })
  const tx = engine.accept(order, "sale", "transfer", amount)
  engine.scheduleFinal(order, tx, order.outcome)
  order.reply = asyncReply(order, "processing")
  return order.reply
}

const panEligibility: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client-order-id"]!
  const pan = fields["sending-card-number"]
  const fromRef = refCard(ctx, "sending-card-ref-id")
  if ((pan === undefined) === (fromRef === undefined)) {
    throw new SimError("invalid-field", "sending-card-number: exactly one of sending-card-number and sending-card-ref-id is required", clientOrderId)
  }
  const card = fromRef ?? cardData(pan!, fields["expire_month"] ?? "01", fields["expire_year"] ?? "2099", fields["card-printed-name"], engine.fingerprint(pan!, ctx.merchant.controlKey))
  const fingerprint = `pan-eligibility|${card.fingerprint}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  // Eligibility moves no money: a card that would decline is "not eligible" (declined).
  const order = newOrder(ctx, { kind: "pan-eligibility", clientOrderId, currency: "USD", amount: 0n, amountText: "0", fingerprint, card, outcome: rebillOutcome(card.outcome, undefined) })
  const tx = engine.accept(order, "verify", "pan-eligibility")
  engine.scheduleFinal(order, tx, order.outcome)
  order.reply = asyncReply(order, "processing")
  return order.reply
}

/** Handlers of this module by operation id. */
export const payoutHandlers = {
  PAYOUT: payout,
  PAYOUT_V4_CHECK: payoutCheck,
  PAYOUT_V4_PAY: payoutPay,
  TRANSFER_V4: transfer,
  TRANSFER_BY_REF_V4: transferByRef,
  PAN_ELIGIBILITY_SEND: panEligibility
} as const satisfies Record<string, Handler>
