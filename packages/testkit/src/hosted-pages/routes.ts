/**
 * The simulator's HTML pages: the access-control (3DS challenge) page and the hosted forms.
 *
 * - `GET /__sim/acs/{orderid}`: pass / fail buttons (two plain forms).
 * - `POST /__sim/acs/{orderid}` with `result=pass|fail`: ends the challenge, then the final redirect.
 * - `GET /__sim/form/{orderid}`: card form (or payout destination form).
 * - `POST /__sim/form/{orderid}`: validates (Luhn, expiry, CVV); errors re-render the form with a
 *   400; a 3DS card goes on to the ACS page (303); otherwise the transaction is decided and the
 *   final redirect follows.
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine/engine"
import type { Order } from "../state/orders"
import { cardData, fullYear, outcomeFor, finalOf, rebillOutcome } from "../rules/cards"
import { html, seeOther, SimError, type SimReply, type SimRequest } from "../http/replies"
import { ConnectionReset } from "../rules/faults"
import { luhnValid } from "@paykit/contracts/card-data"
import { assertFits, THREEDS_FAILED } from "../rules/threeds"
import { payoutDestination } from "../rules/payout-destination"
import { acsUrl } from "./urls"
import { esc } from "../http/html-escape"
import { page } from "./html"
import { formPageHtml, type FormErrors } from "./form-page"
import { finalRedirectPage } from "./final-redirect"

function notFound(): SimReply {
  return html(page("Not found", "<p>No such order.</p>"), 404)
}

function conflict(message: string): SimReply {
  return html(page("Nothing to do here", `<p class="error" id="error">${esc(message)}</p>`), 409)
}

/** Handles a page request under /__sim/acs or /__sim/form; undefined when the path is not a page. */
export async function handlePage(engine: Engine, request: SimRequest, path: string): Promise<SimReply | undefined> {
  const match = /^\/__sim\/(acs|form)\/([0-9]+)$/.exec(path)
  if (match === null) return undefined
  const order = engine.store.get(match[2]!)
  if (order === undefined) return notFound()
  const post = request.method === "POST"
  if (!post && request.method !== "GET") return html(page("Method not allowed", ""), 405)
  const body = post ? new URLSearchParams(await request.text()) : undefined
  if (engine.closed) throw new ConnectionReset()
  return match[1] === "acs" ? acs(engine, order, body) : form(engine, order, body)
}

function acs(engine: Engine, order: Order, body: URLSearchParams | undefined): SimReply {
  try {
    assertFits(order, "acs-page")
  } catch (error) {
    if (error instanceof SimError) return conflict(error.message)
    throw error
  }
  if (body === undefined) {
    const action = esc(acsUrl(engine, order))
    const amount = `${esc(engine.format(order.amount, order.currency))} ${esc(order.currency)}`
    return html(
      page(
        "3-D Secure check",
        `<p>Your bank asks you to confirm this payment. Card <span class="card" id="acs-card">${esc(order.card?.masked ?? "")}</span>${order.card === undefined ? "" : ` (${esc(order.card.brand)})`}.</p>
<div class="choices">
<form method="post" action="${action}"><input type="hidden" name="result" value="pass"><button type="submit" id="pass">Confirm: pass authentication</button></form>
<form method="post" action="${action}"><input type="hidden" name="result" value="fail"><button type="submit" id="fail" class="secondary">Cancel: fail authentication</button></form>
</div>
<p class="test-note">Test environment: this is the simulator's access-control server. A real bank would ask for a code or an app confirmation; here you choose the outcome. Passing approves the payment, failing declines it (3-D Secure authentication failed).</p>`,
        { summary: `<div class="summary"><p class="muted">Order ${esc(order.orderid)} · PayKit Test Bank</p><p class="amount"><span class="sr">Amount: </span>${amount}</p></div>` }
      )
    )
  }
  const result = body.get("result")
  if (result !== "pass" && result !== "fail") return html(page("Bad request", "<p>result must be pass or fail</p>"), 400)
  const tx = order.transactions[0]!
  order.threeDS!.state = result === "pass" ? "passed" : "failed"
  order.threeDS!.via = "acs-page"
  if (tx.status === "processing") engine.finalize(order, tx, result === "pass" ? finalOf("approved") : THREEDS_FAILED)
  return finalRedirectPage(engine, order)
}


function form(engine: Engine, order: Order, body: URLSearchParams | undefined): SimReply {
  if (order.form === undefined) return notFound()
  if (order.form.submitted) {
    return order.status === "processing" && order.threeDS !== undefined && order.threeDS.state !== "passed" && order.threeDS.state !== "failed"
      ? seeOther(acsUrl(engine, order))
      : finalRedirectPage(engine, order)
  }
  if (body === undefined) return formPage(engine, order, {}, new URLSearchParams())
  const payout = order.form.operation === "payout"
  const errors: Record<string, string> = {}
  const get = (name: string): string | undefined => {
    const value = body.get(name)?.trim()
    return value === undefined || value === "" ? undefined : value
  }
  const pan = get("credit_card_number")?.replace(/[\s-]/g, "")
  const month = get("expire_month")
  const year = get("expire_year")
  const holder = get("card_printed_name")
  if (payout) {
    const destination: Record<string, string> = {}
    for (const name of ["credit_card_number", "account_number", "destination_phone"]) {
      const value = name === "credit_card_number" ? pan : get(name)
      if (value !== undefined) destination[name] = value
    }
    try {
      payoutDestination(destination)
    } catch (error) {
      errors["destination"] = error instanceof SimError ? "Enter exactly one destination: a card, an account number or a phone" : "invalid"
    }
  }
  const needsCard = !payout || pan !== undefined
  if (needsCard) {
    if (pan === undefined || !/^[0-9]{12,19}$/.test(pan) || !luhnValid(pan)) errors["credit_card_number"] = "Enter a valid card number"
    if (holder === undefined || holder.length > 128) errors["card_printed_name"] = "Enter the name printed on the card"
    if (month === undefined || !/^(0[1-9]|1[0-2])$/.test(month)) errors["expire_month"] = "Enter the month as two digits (01-12)"
    if (year === undefined || !/^([0-9]{2}|[0-9]{4})$/.test(year)) errors["expire_year"] = "Enter the year as two or four digits"
    else if (month !== undefined && errors["expire_month"] === undefined && expired(engine.clock.now(), month, fullYear(year))) errors["expire_year"] = "The card has expired"
    const cvv = get("cvv2")
    if (!payout && (cvv === undefined || !/^[0-9]{3,4}$/.test(cvv))) errors["cvv2"] = "Enter the 3 or 4 digit security code"
  }
  if (Object.keys(errors).length > 0) return formPage(engine, order, errors, body, 400)

  order.form.submitted = true
  const tx = order.transactions[0]!
  if (pan !== undefined) {
    order.card = cardData(pan, month!, year!, holder, engine.fingerprint(pan, order.controlKey))
  }
  const outcome = payout
    ? rebillOutcome(outcomeFor(pan, undefined), order.amountText)
    : order.form.operation !== "account-verification" && engine.faults.takeDecline(order.operation, order.login) ? "declined" : outcomeFor(pan, order.amountText)
  order.outcome = outcome
  if (outcome === "threeds-challenge") {
    // The browser performs the 3DS method step itself, so the form goes straight to the challenge.
    order.threeDS = { state: "challenge", version: 2 }
    return seeOther(acsUrl(engine, order))
  }
  if (outcome === "slow-approved") engine.scheduleFinal(order, tx, outcome)
  else engine.finalize(order, tx, finalOf(outcome))
  return finalRedirectPage(engine, order)
}

function expired(now: number, month: string, year: string): boolean {
  const d = new Date(now)
  const current = d.getUTCFullYear() * 12 + d.getUTCMonth()
  return Number(year) * 12 + (Number(month) - 1) < current
}

function formPage(engine: Engine, order: Order, errors: FormErrors, previous: URLSearchParams, status = 200): SimReply {
  return html(
    formPageHtml({
      action: `${engine.baseUrl}/__sim/form/${order.orderid}`,
      orderid: order.orderid,
      amount: engine.format(order.amount, order.currency),
      currency: order.currency,
      payout: order.form?.operation === "payout",
      errors,
      previous
    }),
    status
  )
}
