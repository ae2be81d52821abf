/**
 * The final redirect: an auto-submitting HTML form that POSTs the signed result to the merchant's
 * `redirect_url` (gateway-facts "Final redirect"), with
 * control = SHA-1(status + orderid + client_orderid + key).
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine/engine"
import type { Order } from "../state/orders"
import { signCallback } from "../auth/auth"
import { html, type SimReply } from "../http/replies"
import { esc } from "../http/html-escape"
import { hiddenInputs, page } from "./html"

/** The fields the browser POSTs to `redirect_url`. */
function finalRedirectFields(engine: Engine, order: Order): Record<string, string> {
  const last = order.transactions[order.transactions.length - 1]
  const fields: Record<string, string> = {
    status: order.status,
    orderid: order.orderid,
    merchant_order: order.clientOrderId,
    client_orderid: order.clientOrderId,
    amount: engine.format(order.amount, order.currency),
    currency: order.currency,
    type: last?.type ?? order.kind,
    descriptor: "PAYKIT SIMULATOR",
    error_message: order.status === "approved" ? "null" : order.errorMessage ?? "null",
    error_code: order.status === "approved" ? "0" : order.errorCode ?? "0"
  }
  if (order.card !== undefined) {
    fields["bin"] = order.card.bin
    fields["last-four-digits"] = order.card.last4
    fields["card-type"] = order.card.brand
    if (order.card.holder !== undefined) fields["card-holder-name"] = order.card.holder
  }
  fields["control"] = signCallback(fields as { status: string; orderid: string; client_orderid: string }, engine.callbackKeyOf(order))
  return fields
}

/** The page that sends the customer back to the merchant (or shows the result without a redirect_url). */
export function finalRedirectPage(engine: Engine, order: Order): SimReply {
  const fields = finalRedirectFields(engine, order)
  if (order.redirectUrl === undefined) {
    return html(page("Payment finished", `<p id="result">Status: <strong>${esc(order.status)}</strong></p>`))
  }
  return html(
    page(
      "Returning to the merchant",
      `<form id="final-redirect" method="post" action="${esc(order.redirectUrl)}">
${hiddenInputs(fields)}
<p>Status: <strong>${esc(order.status)}</strong></p>
<noscript><button type="submit">Continue</button></noscript>
</form>
<script>document.getElementById("final-redirect").submit()</script>`
    )
  )
}
