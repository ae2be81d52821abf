/**
 * Recurring payments (v4). `period` (day, week, month) and `interval` make a schedule on the
 * simulator clock; each due charge is a rebill order with its own callback (docs/decisions.md#13-recurring-payments).
 * process-recurring-payment charges now, the same way; update-recurring-payment changes the amount,
 * card, schedule or finish date of later charges (docs/decisions.md#d13p-process-a-recurring-payment, docs/decisions.md#d13u-update-a-recurring-payment).
 *
 * @packageDocumentation
 */
import { SimError, serialNumber } from "../http/replies"
import type { Engine } from "../engine/engine"
import type { Order } from "../state/orders"
import { newOrder, replayIfRepeated, takeCard, asyncReply, type Handler, type OpContext, type Reply } from "./context"
import { rebillOutcome } from "../rules/cards"
import type { RecurringPayment } from "../state/refs"


/** Fields of the create request each charge's order takes over (see `newOrder`). */
const ORDER_FIELDS = ["email", "redirect_url", "server_callback_url", "merchant_data"] as const

const DAY = 24 * 60 * 60 * 1000

/** The next charge time after `from`. Months add calendar months (UTC), days and weeks fixed ms. */
function nextChargeAt(from: number, period: "day" | "week" | "month", interval: number): number {
  if (period === "day") return from + interval * DAY
  if (period === "week") return from + interval * 7 * DAY
  const d = new Date(from)
  const day = d.getUTCDate()
  d.setUTCDate(1)
  d.setUTCMonth(d.getUTCMonth() + interval)
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()
  d.setUTCDate(Math.min(day, lastDay))
  return d.getTime()
}

function dateMs(text: string, field: string): number {
  const ms = Date.parse(`${text}T00:00:00Z`)
  if (Number.isNaN(ms)) throw new SimError("invalid-field", `${field}: not a calendar date`)
  return ms
}

const createRecurring: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client-orderid"]!
  const period = fields["period"] as RecurringPayment["period"]
  const intervalText = fields["interval"]
  if ((period === undefined) !== (intervalText === undefined)) {
    throw new SimError("invalid-field", "period: period and interval are given both or neither", clientOrderId)
  }
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  const taken = takeCard(ctx, { pan: "credit-card-number", month: "expire-month", year: "expire-year", holder: "card-printed-name" })!
  const fingerprint = `recurring|${amount}|${currency}|${taken.card.fingerprint}|${period ?? ""}|${intervalText ?? ""}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  const order = newOrder(ctx, { kind: "recurring", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card: taken.card, outcome: "approved" })
  const rp: RecurringPayment = {
    id: engine.newRefId("RP"),
    clientOrderId,
    amountText: fields["amount"]!,
    amount,
    currency,
    card: taken.card,
    interval: intervalText === undefined ? 1 : Number(intervalText),
    charges: 0,
    login: ctx.merchant.login,
    endpointId: ctx.endpointId,
    operation: ctx.operationId,
    orderFields: Object.fromEntries(ORDER_FIELDS.filter((name) => fields[name] !== undefined).map((name) => [name, fields[name]!])),
    ...(period === undefined ? {} : { period }),
    ...(fields["finish-date"] === undefined ? {} : { finishAt: dateMs(fields["finish-date"], "finish-date") + DAY - 1 })
  }
  engine.recurring.set(rp.id, rp)
  order.recurringPaymentId = rp.id
  engine.addTx(order, "create-recurring-payment", "approved")
  if (period !== undefined) {
    const start = fields["start-date"] === undefined ? undefined : dateMs(fields["start-date"], "start-date")
    const first = start !== undefined && start > engine.clock.now() ? start : nextChargeAt(engine.clock.now(), period, rp.interval)
    scheduleCharge(engine, rp, first)
  }
  const reply = asyncReply(order, "approved", { "recurring-payment-id": rp.id })
  delete reply["end-point-id"]
  order.reply = reply
  return reply
}

/** Queues the charge at `at` (a pending job on the clock); each charge queues the next one. */
function scheduleCharge(engine: Engine, rp: RecurringPayment, at: number): void {
  if (rp.finishAt !== undefined && at > rp.finishAt) {
    rp.nextChargeAt = null
    return
  }
  rp.nextChargeAt = at
  engine.schedule(at, { kind: "recurring-charge", recurringPaymentId: rp.id })
}

/**
 * A charge of `rp` as a new rebill order through the ledger, with its callback once final. `ctx`
 * names the merchant, endpoint and operation; the order takes the create request's e-mail and URLs.
 */
function charge(ctx: OpContext, rp: RecurringPayment, init: { clientOrderId: string; amount: bigint; amountText: string; fingerprint: string }): Order {
  const { engine } = ctx
  const order = newOrder({ ...ctx, fields: rp.orderFields }, {
    kind: "rebill",
    clientOrderId: init.clientOrderId,
    currency: rp.currency,
    amount: init.amount,
    amountText: init.amountText,
    fingerprint: init.fingerprint,
    card: rp.card,
    outcome: rebillOutcome(rp.card.outcome, init.amountText)
  })
  order.recurringPaymentId = rp.id
  const tx = engine.accept(order, "sale", "rebill", init.amount)
  order.reply = asyncReply(order, "processing")
  engine.scheduleFinal(order, tx, order.outcome)
  return order
}

/** Makes the charge of recurring payment `id` due at `at` (the clock's pending job), then queues the next. */
export function chargeRecurring(engine: Engine, id: string, at: number): void {
  const rp = engine.recurring.get(id)
  if (rp === undefined) return
  // An update replaced the schedule (null: nothing queued; undefined: a snapshot from before updates existed).
  if (rp.nextChargeAt !== undefined && rp.nextChargeAt !== at) return
  if (rp.period === undefined || (rp.finishAt !== undefined && at > rp.finishAt)) {
    rp.nextChargeAt = null
    return
  }
  const merchant = engine.merchantByLogin(rp.login)
  if (merchant === undefined) return
  const ctx: OpContext = { engine, operationId: rp.operation as OpContext["operationId"], merchant, endpointId: rp.endpointId, fields: rp.orderFields }
  rp.charges += 1
  charge(ctx, rp, {
    clientOrderId: `${rp.clientOrderId}-${rp.charges}`,
    amount: rp.amount,
    amountText: rp.amountText,
    fingerprint: `rebill|${rp.amount}|${rp.currency}|${rp.card.fingerprint}`
  })
  scheduleCharge(engine, rp, nextChargeAt(at, rp.period, rp.interval))
}

/** The merchant's recurring payment named by the request, else recurring-payment-not-found. */
function findRecurring(ctx: OpContext, clientOrderId: string): RecurringPayment {
  const id = ctx.fields["recurring-payment-id"]!
  const rp = ctx.engine.recurring.get(id)
  // Another merchant's id is as unknown as a made-up one: ids must not leak across merchants.
  if (rp === undefined || rp.login !== ctx.merchant.login) {
    throw new SimError("recurring-payment-not-found", `recurring-payment-id: no recurring payment ${id} for this merchant`, clientOrderId)
  }
  return rp
}

/** An amount in the profile's currency (the request carries none), more than zero. */
function profileAmount(engine: Engine, rp: RecurringPayment, text: string, clientOrderId: string): bigint {
  let amount: bigint
  try {
    amount = engine.minor(text, rp.currency)
  } catch (error) {
    if (error instanceof SimError) error.merchantOrderId = clientOrderId
    throw error
  }
  if (amount <= 0n) throw new SimError("invalid-amount", `amount: must be more than 0 ${rp.currency}`, clientOrderId)
  return amount
}

function isStopped(engine: Engine, rp: RecurringPayment): boolean {
  return rp.finishAt !== undefined && engine.clock.now() > rp.finishAt
}

/** process-recurring-payment: charge now, as a rebill order under the request's client-orderid. */
const processRecurring: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client-orderid"]!
  const rp = findRecurring(ctx, clientOrderId)
  const amountText = fields["amount"] ?? rp.amountText
  const amount = profileAmount(engine, rp, amountText, clientOrderId)
  const fingerprint = `process|${rp.id}|${amount}|${rp.currency}`
  // The same request again is the same charge, even once the profile has stopped.
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  if (isStopped(engine, rp)) {
    throw new SimError("recurring-payment-inactive", `recurring-payment-id: ${rp.id} is stopped (its finish-date has passed); update finish-date to re-activate it`, clientOrderId)
  }
  rp.processed = (rp.processed ?? 0) + 1
  const order = charge(ctx, rp, { clientOrderId, amount, amountText, fingerprint })
  const reply: Reply = {
    type: "process-recurring-payment-response",
    status: "processing",
    "serial-number": serialNumber(),
    "merchant-order-id": clientOrderId,
    "paynet-order-id": order.orderid,
    "recurring-payment-id": rp.id
  }
  order.reply = reply
  return reply
}

const CARD_NAMES = { pan: "credit-card-number", holder: "card-printed-name", month: "expire-month", year: "expire-year" } as const

/** update-recurring-payment: checks every field first, then changes amount, card, schedule or finish date. */
const updateRecurring: Handler = (ctx) => {
  const { engine, fields } = ctx
  const clientOrderId = fields["client-orderid"]!
  const rp = findRecurring(ctx, clientOrderId)
  const cardFields = Object.values(CARD_NAMES)
  const missingCard = cardFields.filter((name) => fields[name] === undefined)
  if (missingCard.length > 0 && missingCard.length < cardFields.length) {
    throw new SimError("invalid-field", `${missingCard[0]}: a new card needs credit-card-number, card-printed-name, expire-month and expire-year together`, clientOrderId)
  }
  const period = fields["period"] as RecurringPayment["period"]
  const intervalText = fields["interval"]
  if ((period === undefined) !== (intervalText === undefined)) {
    throw new SimError("invalid-field", "period: period and interval are given both or neither", clientOrderId)
  }
  if (fields["start-date"] !== undefined && period === undefined) {
    throw new SimError("invalid-field", "start-date: a start date needs period and interval (a new schedule)", clientOrderId)
  }
  if (fields["amount"] === undefined && missingCard.length > 0 && period === undefined && fields["finish-date"] === undefined) {
    throw new SimError("invalid-field", "amount: nothing to update; send amount, a card, period and interval, or finish-date", clientOrderId)
  }
  const amount = fields["amount"] === undefined ? undefined : profileAmount(engine, rp, fields["amount"], clientOrderId)
  const taken = missingCard.length === 0 ? takeCard(ctx, CARD_NAMES) : undefined
  const start = fields["start-date"] === undefined ? undefined : dateMs(fields["start-date"], "start-date")
  const finishAt = fields["finish-date"] === undefined ? undefined : dateMs(fields["finish-date"], "finish-date") + DAY - 1
  // Everything is valid: apply it all (nothing half-written).
  if (amount !== undefined) {
    rp.amount = amount
    rp.amountText = fields["amount"]!
  }
  if (taken !== undefined) rp.card = taken.card
  if (finishAt !== undefined) rp.finishAt = finishAt
  const now = engine.clock.now()
  if (period !== undefined) {
    rp.period = period
    rp.interval = Number(intervalText)
    scheduleCharge(engine, rp, start !== undefined && start > now ? start : nextChargeAt(now, period, rp.interval))
  } else if (finishAt !== undefined && rp.period !== undefined && rp.nextChargeAt === null) {
    // A later finish date re-activates a stopped schedule (a queued charge past an earlier one is skipped when due).
    scheduleCharge(engine, rp, nextChargeAt(now, rp.period, rp.interval))
  }
  return {
    type: "update-recurring-payment-response",
    status: "approved",
    "serial-number": serialNumber(),
    "merchant-order-id": clientOrderId,
    "recurring-payment-id": rp.id
  }
}

/** Handlers of this module by operation id. */
export const recurringHandlers = {
  CREATE_RP_V4: createRecurring,
  PROCESS_RP_V4: processRecurring,
  UPDATE_RP_V4: updateRecurring
} as const satisfies Record<string, Handler>
