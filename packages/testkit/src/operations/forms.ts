/**
 * Hosted forms and the 3DS uploads. A form operation registers the order and answers
 * `async-form-response` with a `redirect-url` to the simulator's own form page; the page collects
 * the card (or payout destination) and continues like the direct operation.
 *
 * @packageDocumentation
 */
import { serialNumber } from "../http/replies"
import { formUrl } from "../hosted-pages/urls"
import { assertFits, authenticated, THREEDS_FAILED } from "../rules/threeds"
import type { FormState } from "../state/orders"
import { asyncReply, findOrder, newOrder, replayIfRepeated, type Handler, type OpContext, type Reply } from "./context"

function form(operation: FormState["operation"]): Handler {
  return (ctx) => {
    const { engine, fields } = ctx
    const clientOrderId = fields["client_orderid"]!
    const currency = fields["currency"] ?? "USD"
    const amountText = fields["amount"] ?? "0"
    const amount = operation === "account-verification" ? 0n : engine.minor(amountText, currency)
    const fingerprint = `form-${operation}|${amount}|${currency}`
    const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
    if (repeated !== undefined) return repeated
    const kind = operation === "account-verification" ? "account-verification" : operation
    const order = newOrder(ctx, { kind, clientOrderId, currency, amount, amountText, fingerprint, outcome: "approved" })
    order.form = { operation, submitted: false }
    const op = operation === "account-verification" ? "verify" : operation === "payout" ? "payout" : operation
    engine.accept(order, op, kind, operation === "account-verification" ? undefined : amount)
    const reply: Reply = {
      type: "async-form-response",
      status: "processing",
      "serial-number": serialNumber(),
      "merchant-order-id": clientOrderId,
      "paynet-order-id": order.orderid,
      "end-point-id": order.endpointId,
      "redirect-url": formUrl(engine, order)
    }
    order.reply = reply
    return reply
  }
}

function upload(event: "method-result" | "cres" | "pares"): Handler {
  return (ctx: OpContext) => {
    const { engine, fields } = ctx
    const order = findOrder(ctx, fields["orderid"], fields["client-order-id"])
    assertFits(order, event)
    const tx = order.transactions[0]!
    if (event === "method-result") {
      order.threeDS.compInd = fields["threeDSCompInd"] as "Y" | "N" | "U"
      order.threeDS.state = "challenge"
      return asyncReply(order, "processing")
    }
    const passed = authenticated(fields[event === "cres" ? "cRes" : "paRes"]!)
    order.threeDS.state = passed ? "passed" : "failed"
    order.threeDS.via = event
    if (passed) engine.scheduleFinal(order, tx, order.outcome === "threeds-challenge" ? "approved" : order.outcome)
    else engine.scheduleFinalWith(order, tx, THREEDS_FAILED)
    return asyncReply(order, "processing")
  }
}

/** Handlers of this module by operation id. */
export const formHandlers = {
  SALEFORM: form("sale"),
  PREAUTHFORM: form("preauth"),
  PAYMENTFORM: form("sale"),
  ACCOUNT_VERIFICATION_FORM: form("account-verification"),
  PAYOUTFORM: form("payout"),
  TDS_UPLOAD_METHOD_URL_RESULT: upload("method-result"),
  TDS_UPLOAD_CRES_RESULT: upload("cres"),
  TDS_UPLOAD_PARES_RESULT: upload("pares")
} as const satisfies Record<string, Handler>
