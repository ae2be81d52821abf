/**
 * Payouts (one-step, and check-then-pay), card-to-card transfers and PAN eligibility.
 *
 * @packageDocumentation
 */
import { SimError } from "../http/replies"
import { cardData, finalOf, outcomeFor, rebillOutcome, type CardData } from "../rules/cards"
import { payoutDestination } from "../rules/payout-destination"
import { asyncReply, currentReply, findOrder, newOrder, replayIfRepeated, takeCard, type Handler, type OpContext } from "./context"

/** Where a payout goes: a key that tells two destinations apart, and the card when it is one. */
interface Destination {
  readonly key: string
  readonly pan?: string
  readonly card?: CardData
}

/** {@link payoutDestination} of a request; a stored card must be this merchant's and stands for its card. */
function destinationOf(ctx: OpContext): Destination {
  const destination = payoutDestination(ctx.fields)
  const card = refCard(ctx, "destination-card-ref-id")
  return card === undefined ? destination : { key: `card-ref:${card.fingerprint}`, card }
}

function registerPayout(ctx: OpContext, checked: boolean) {
  const { engine, fields } = ctx
  const destination = destinationOf(ctx)
  const clientOrderId = fields["client_orderid"]!
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  const taken = takeCard(ctx)
  const destKey = taken === undefined ? destination.key : taken.card.fingerprint
  const fingerprint = `payout${checked ? "-check" : ""}|${amount}|${currency}|${destKey}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return { repeated }
  // A stored card decides like the card it stands for; a wallet, account or phone approves unless a magic amount says otherwise.
  const cardOutcome = destination.card === undefined ? outcomeFor(destination.pan, undefined) : destination.card.outcome
  const outcome = rebillOutcome(cardOutcome, fields["amount"])
  const card = taken?.card ?? destination.card
  const order = newOrder(ctx, { kind: "payout", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card, outcome })
  return { order }
}

const payout: Handler = (ctx) => {
  const { repeated, order } = registerPayout(ctx, false)
  if (repeated !== undefined) return repeated
  const tx = ctx.engine.accept(order!, "payout", "payout", order!.amount)
  ctx.engine.scheduleFinal(order!, tx, order!.outcome)
  order!.reply = asyncReply(order!, "processing", { "serial-number": tx.serialNumber })
  return order!.reply
}

/**
 * The check validates the recipient at once: a destination that would decline, fail or be filtered
 * ends the order with that status. An approved check registers the payout and moves no money: the
 * order stays processing (not final) until payout-pay (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger).
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
  order!.reply = { ...currentReply(order!, asyncReply(order!, order!.status)), "serial-number": tx.serialNumber }
  return order!.reply
}

const payoutPay: Handler = (ctx) => {
  const order = findOrder(ctx, ctx.fields["orderid"], ctx.fields["client_orderid"])
  const tx = ctx.engine.accept(order, "payout-pay", "payout", order.amount)
  ctx.engine.scheduleFinal(order, tx, order.outcome)
  return asyncReply(order, "processing", { "serial-number": tx.serialNumber })
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
  order.reply = asyncReply(order, "processing", { "serial-number": tx.serialNumber })
  return order.reply
}

const transferByRef: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client-order-id"]!
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  // Optional, as in the interface's example (docs/decisions.md#d15r-transfer-by-reference-without-a-source): without it the merchant's account pays.
  const source = refCard(ctx, "source-card-ref-id")
  const destRef = refCard(ctx, "destination-card-ref-id")
  const destination = fields["destination-card-no"]
  if ((destRef === undefined) === (destination === undefined)) {
    throw new SimError("invalid-field", "destination-card-no: exactly one of destination-card-no and destination-card-ref-id is required", clientOrderId)
  }
  const destFp = destRef?.fingerprint ?? engine.fingerprint(destination!, ctx.merchant.controlKey)
  const fingerprint = `transfer-by-ref|${amount}|${currency}|${source?.fingerprint ?? "merchant"}|${destFp}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  // The paying card decides; with the merchant's account paying, the receiving card does (as a payout).
  const deciding = source?.outcome ?? destRef?.outcome ?? outcomeFor(destination, undefined)
  const order = newOrder(ctx, { kind: "transfer", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card: source ?? destRef, outcome: rebillOutcome(deciding, fields["amount"]) })
  const tx = engine.accept(order, "sale", "transfer", amount)
  engine.scheduleFinal(order, tx, order.outcome)
  order.reply = asyncReply(order, "processing", { "serial-number": tx.serialNumber })
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
  order.reply = asyncReply(order, "processing", { "serial-number": tx.serialNumber })
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
