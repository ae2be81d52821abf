/**
 * Recurring payments (v4). `period` (day, week, month) and `interval` make a schedule on the
 * simulator clock; each due charge is a rebill order with its own callback (DESIGN.md decision 13).
 *
 * @packageDocumentation
 */
import { SimError } from "../replies"
import type { Engine } from "../engine"
import { newOrder, replayIfRepeated, takeCard, asyncReply, type Handler, type OpContext } from "./context"
import { rebillOutcome } from "./payments"
import type { RecurringPayment } from "../state/refs"

export type { RecurringPayment } from "../state/refs"

/** Fields of the create request each charge's order takes over (see `newOrder`). */
const ORDER_FIELDS = ["email", "redirect_url", "server_callback_url", "merchant_data"] as const

const DAY = 24 * 60 * 60 * 1000

/** The next charge time after `from`. Months add calendar months (UTC), days and weeks fixed ms. */
export function nextChargeAt(from: number, period: "day" | "week" | "month", interval: number): number {
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
  if (rp.finishAt !== undefined && at > rp.finishAt) return
  engine.schedule(at, { kind: "recurring-charge", recurringPaymentId: rp.id })
}

/** Makes the charge of recurring payment `id` due at `at` (the clock's pending job), then queues the next. */
export function chargeRecurring(engine: Engine, id: string, at: number): void {
  const rp = engine.recurring.get(id)
  if (rp === undefined) return
  const merchant = engine.merchantByLogin(rp.login)
  if (merchant === undefined) return
  const ctx: OpContext = { engine, operationId: rp.operation as OpContext["operationId"], merchant, endpointId: rp.endpointId, fields: rp.orderFields }
  rp.charges += 1
  const clientOrderId = `${rp.clientOrderId}-${rp.charges}`
  const order = newOrder(ctx, {
    kind: "rebill",
    clientOrderId,
    currency: rp.currency,
    amount: rp.amount,
    amountText: rp.amountText,
    fingerprint: `rebill|${rp.amount}|${rp.currency}|${rp.card.fingerprint}`,
    card: rp.card,
    outcome: rebillOutcome(rp.card.outcome, rp.amountText)
  })
  order.recurringPaymentId = rp.id
  const tx = engine.accept(order, "sale", "rebill", rp.amount)
  order.reply = asyncReply(order, "processing")
  engine.scheduleFinal(order, tx, order.outcome)
  scheduleCharge(engine, rp, nextChargeAt(at, rp.period!, rp.interval))
}

/** Handlers of this module by operation id. */
export const recurringHandlers = {
  CREATE_RP_V4: createRecurring
} as const satisfies Record<string, Handler>
