/**
 * Card payments: sale, preauth, account verification, capture, void, return, rebill and status,
 * with the lifecycle rules of the interface (§3) and docs/decisions.md#10-an-orders-lifecycle-is-one-ledger.
 *
 * @packageDocumentation
 */
import { SimError, serialNumber } from "../http/replies"
import { outcomeFor, rebillOutcome } from "../rules/cards"
import type { Order } from "../state/orders"
import { returnOpFor, totalsOf } from "../ledger/index"
import { approvalCode, processorRrn } from "../engine/transaction-codes"
import { acsRedirectHtml, acsUrl, formUrl } from "../hosted-pages/urls"
import { asyncReply, asyncReplyWithSerial, findOrder, newOrder, replayIfRepeated, takeCard, type Handler, type OpContext, type Reply } from "./context"

/** Sale, preauth and account verification with card data (the direct operations). */
function cardPayment(kind: "sale" | "preauth" | "account-verification"): Handler {
  return (ctx) => {
    const { engine, fields } = ctx
    const clientOrderId = fields["client_orderid"]!
    const currency = fields["currency"] ?? "USD"
    const amountText = fields["amount"] ?? "0"
    const amount = kind === "account-verification" ? 0n : engine.minor(amountText, currency)
    const taken = takeCard(ctx)!
    const fingerprint = `${kind}|${amount}|${currency}|${taken.card.fingerprint}`
    const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
    if (repeated !== undefined) return repeated
    const outcome = kind !== "account-verification" && engine.faults.takeDecline(ctx.operationId, ctx.merchant.login) ? "declined" : outcomeFor(taken.pan, fields["amount"])
    const order = newOrder(ctx, { kind, clientOrderId, currency, amount, amountText, fingerprint, card: taken.card, outcome })
    const tx = engine.accept(order, kind === "account-verification" ? "verify" : kind, kind, amount)
    let reply: Reply
    if (outcome === "threeds-challenge") {
      order.threeDS = { state: "method" }
      reply = asyncReply(order, "processing", { "redirect-url": acsUrl(engine, order), "serial-number": tx.serialNumber })
    } else {
      engine.scheduleFinal(order, tx, outcome)
      reply = asyncReplyWithSerial(order, "processing", tx.serialNumber)
    }
    order.reply = reply
    return reply
  }
}

/** `amount` and `currency` travel together or not at all; the currency must be the order's. */
function optionalAmount(ctx: OpContext, order: Order): bigint | undefined {
  const { amount, currency } = ctx.fields
  if (amount === undefined && currency === undefined) return undefined
  if (amount === undefined || currency === undefined) {
    throw new SimError("currency-mismatch", "currency: amount and currency must be sent together", order.clientOrderId)
  }
  if (currency !== order.currency) {
    throw new SimError("currency-mismatch", `currency: ${currency} differs from the order's ${order.currency}`, order.clientOrderId)
  }
  return ctx.engine.minor(amount, currency)
}

/**
 * Capture, void and return ask the order's ledger: it refuses by its rules table (each rule its
 * own error-code) and reserves what it accepts; the handlers keep no sums.
 */
function moneyOp(op: "capture" | "void" | "return"): Handler {
  return (ctx) => {
    const order = findOrder(ctx, ctx.fields["orderid"], ctx.fields["client_orderid"])
    const requested = optionalAmount(ctx, order)
    const ledgerOp = op === "return" ? returnOpFor(order.ledger) : op
    const tx = ctx.engine.accept(order, ledgerOp, op, requested)
    ctx.engine.scheduleFinal(order, tx, "approved")
    // The request's serial-number is its transaction's: status by-request-sn finds it (docs/decisions.md#d7r-status-by-request-serial-number).
    return asyncReplyWithSerial(order, "processing", tx.serialNumber)
  }
}

const rebill: Handler = (ctx) => {
  const { engine, fields } = ctx
  const ref = engine.cardRefs.get(fields["cardrefid"]!)
  if (ref === undefined || ref.login !== ctx.merchant.login) {
    throw new SimError("card-ref-not-found", `cardrefid: no card reference ${fields["cardrefid"]!}`, fields["client_orderid"])
  }
  const clientOrderId = fields["client_orderid"]!
  const currency = fields["currency"]!
  const amount = engine.minor(fields["amount"]!, currency)
  const fingerprint = `rebill|${amount}|${currency}|${ref.card.fingerprint}`
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  const outcome = engine.faults.takeDecline(ctx.operationId, ctx.merchant.login) ? "declined" : rebillOutcome(ref.card.outcome, fields["amount"])
  const order = newOrder(ctx, { kind: "rebill", clientOrderId, currency, amount, amountText: fields["amount"]!, fingerprint, card: ref.card, outcome })
  order.cardRefId = ref.id
  const tx = engine.accept(order, "sale", "rebill", amount)
  engine.scheduleFinal(order, tx, order.outcome)
  order.reply = asyncReplyWithSerial(order, "processing", tx.serialNumber)
  return order.reply
}

/** The StatusResponse of an order. */
function statusReply(ctx: OpContext, order: Order): Reply {
  const { engine } = ctx
  const last = order.transactions[order.transactions.length - 1]
  // asyncReply's fields without end-point-id, built without `delete` (which turns the object into a
  // slow dictionary for every field added after it and for JSON.stringify).
  const reply: Reply = {
    type: "status-response",
    status: order.status,
    "serial-number": serialNumber(),
    "merchant-order-id": order.clientOrderId,
    "paynet-order-id": order.orderid
  }
  if (last !== undefined) reply["transaction-type"] = last.type
  reply["amount"] = engine.format(order.amount, order.currency)
  reply["currency"] = order.currency
  const totals = totalsOf(order.ledger)
  if (order.kind === "preauth") {
    reply["captured-amount"] = engine.format(totals.captured, order.currency)
    reply["hold-released-amount"] = engine.format(totals.holdReleased, order.currency)
  }
  // Captured money a void reversed: without it a voided, partly captured preauth would read as charged.
  if (totals.voided > 0n) reply["voided-amount"] = engine.format(totals.voided, order.currency)
  if (totals.chargedBack > 0n) reply["chargeback-amount"] = engine.format(totals.chargedBack, order.currency)
  if (totals.returned > 0n || order.kind === "sale" || order.kind === "rebill" || order.kind === "preauth") {
    reply["returned-amount"] = engine.format(totals.returned, order.currency)
  }
  if (order.status === "processing") {
    if (order.threeDS !== undefined && (order.threeDS.state === "method" || order.threeDS.state === "challenge")) {
      const acs = acsUrl(engine, order)
      reply["redirect-to"] = acs
      reply["html"] = acsRedirectHtml(acs)
      reply["order-stage"] = "sale_3d_validating"
    } else if (order.form !== undefined && !order.form.submitted) {
      reply["redirect-to"] = formUrl(engine, order)
      reply["order-stage"] = "form_waiting"
    }
  }
  if (order.card !== undefined) {
    reply["bin"] = order.card.bin
    reply["last-four-digits"] = order.card.last4
    reply["card-type"] = order.card.brand
    reply["card-exp-month"] = order.card.expireMonth
    reply["card-exp-year"] = order.card.expireYear
    if (order.card.holder !== undefined) reply["cardholder-name"] = order.card.holder.slice(0, 128)
  }
  if (order.cardRefId !== undefined) reply["card-ref-id"] = order.cardRefId
  if (order.recurringPaymentId !== undefined) reply["recurring-payment-id"] = order.recurringPaymentId
  if (order.email !== undefined) reply["email"] = order.email
  if (order.status === "approved") {
    const index = order.transactions.length - 1
    reply["approval-code"] = approvalCode(order.orderid, index)
    reply["processor-rrn"] = processorRrn(order.orderid, index)
  }
  if (order.errorCode !== undefined && order.status !== "approved") reply["error-code"] = order.errorCode
  if (order.errorMessage !== undefined && order.status !== "approved") reply["error-message"] = order.errorMessage
  return reply
}

const status: Handler = (ctx) => {
  const order = findOrder(ctx, ctx.fields["orderid"], ctx.fields["client_orderid"])
  const sn = ctx.fields["by-request-sn"]
  return sn === undefined ? statusReply(ctx, order) : transactionStatusReply(ctx, order, sn)
}

/**
 * Status of one transaction of the order, the one whose request was answered with serial-number
 * `sn` (the gateway's `by-request-sn`, docs/decisions.md#d7r-status-by-request-serial-number): its status, type, amount and approval fields;
 * the order's ledger sums stay as they are. Not one of the order's → transaction-not-found.
 */
function transactionStatusReply(ctx: OpContext, order: Order, sn: string): Reply {
  const index = order.transactions.findIndex((tx) => tx.serialNumber === sn)
  if (index < 0) {
    throw new SimError("transaction-not-found", `by-request-sn: order ${order.orderid} has no transaction with serial-number ${sn.slice(0, 64)}`, order.clientOrderId)
  }
  const tx = order.transactions[index]!
  const reply = statusReply(ctx, order)
  reply["status"] = tx.status
  reply["transaction-type"] = tx.type
  reply["amount"] = ctx.engine.format(tx.amount ?? order.amount, order.currency)
  delete reply["approval-code"]
  delete reply["processor-rrn"]
  if (tx.status === "approved") {
    reply["approval-code"] = approvalCode(order.orderid, index)
    reply["processor-rrn"] = processorRrn(order.orderid, index)
  }
  // A 3DS step and the order's error belong to its first transaction.
  if (index > 0 || tx.status !== "processing") for (const name of ["redirect-to", "html", "order-stage"]) delete reply[name]
  if (index > 0 || tx.status === "approved") {
    delete reply["error-code"]
    delete reply["error-message"]
  }
  return reply
}

/** Handlers of this module by operation id. */
export const paymentHandlers = {
  SALE: cardPayment("sale"),
  PREAUTH: cardPayment("preauth"),
  ACCOUNT_VERIFICATION: cardPayment("account-verification"),
  CAPTURE: moneyOp("capture"),
  VOID: moneyOp("void"),
  RETURN: moneyOp("return"),
  REBILL: rebill,
  STATUS: status
} as const satisfies Record<string, Handler>
