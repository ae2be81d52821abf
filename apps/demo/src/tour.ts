/**
 * The tour: every flow of the gateway, run with `@paykit/client`, each checked against what it
 * must end in. A flow returns the order it made and the final status it saw.
 */
import type { AwaitFinalResult, PromisePayClient } from "@paykit/client"
import { answerChallenge, payOnHostedPage } from "./customer"
import type { DemoEnv } from "./environment"
import { step } from "./report"

/** One flow of the tour. */
export interface Flow {
  readonly name: string
  readonly expected: string
  /**
   * Why the flow needs the embedded simulator (its clock, its hosted pages driven without a
   * person); against another gateway the flow is skipped with this reason.
   */
  readonly simulatorOnly?: string
  readonly run: (env: DemoEnv) => Promise<{ orderid: string; finalStatus: string }>
}

let seq = 0
const newId = (flow: string) => `demo-${flow}-${Date.now().toString(36)}-${++seq}`

const customer = {
  first_name: "Ada",
  last_name: "Lovelace",
  address1: "12 Analytical Row",
  city: "London",
  zip_code: "N1 9GU",
  country: "GB",
  phone: "+44 2079460000",
  email: "ada@example.com",
  ipaddress: "203.0.113.7"
} as const

const card = (pan: string) =>
  ({ card_printed_name: "ADA LOVELACE", credit_card_number: pan, expire_month: "12", expire_year: "2030", cvv2: "123" }) as const

const urls = (env: DemoEnv) => ({
  redirect_url: env.redirectUrl,
  ...(env.serverCallbackUrl === undefined ? {} : { server_callback_url: env.serverCallbackUrl })
})

const saleFields = (env: DemoEnv, id: string, pan: string, amount = "25.00") => ({
  client_orderid: id,
  order_desc: "PayKit demo order",
  amount,
  currency: "EUR",
  ...customer,
  ...card(pan),
  ...urls(env)
})

const formFields = (env: DemoEnv, id: string, amount = "19.90") => ({
  client_orderid: id,
  order_desc: "PayKit demo hosted order",
  amount,
  currency: "EUR",
  ...customer,
  ...urls(env)
})

/** The subscriber's card and address for create-recurring-payment (the gateway's hyphenated names). */
const subscriber = (env: DemoEnv, id: string) => ({
  "client-orderid": id, currency: "EUR",
  "credit-card-number": "4111111111111111", "card-printed-name": "ADA LOVELACE", "expire-month": "12", "expire-year": "2030",
  country: "GB", city: "London", "zip-code": "N1 9GU", address1: "12 Analytical Row", "customer-ip": customer.ipaddress,
  ...(env.serverCallbackUrl ? { server_callback_url: env.serverCallbackUrl } : {})
})

const orderidOf = (reply: { readonly "paynet-order-id"?: string | undefined }): string => {
  const id = reply["paynet-order-id"]
  if (id === undefined) throw new Error("the reply carries no paynet-order-id")
  return id
}

/**
 * A link as the reader can use it: the embedded simulator answers in process only, so its links
 * are printed as what they are (a path it serves) and where the same pages can be opened.
 */
export const linkText = (env: DemoEnv, url: string): string => {
  if (env.simulator === undefined || new URL(url).origin !== env.simulatorOrigin) return url
  const { pathname } = new URL(url)
  return `the hosted page ${pathname} (served in process by the embedded simulator, not on the network; \`pnpm demo --serve\` serves these pages in a browser)`
}

/** Waits for the final status; a pending redirect at this point is a failure of the flow. */
const final = async (pay: PromisePayClient, client_orderid: string, orderid?: string) => {
  const result: AwaitFinalResult = await pay.awaitFinal(orderid === undefined ? { client_orderid } : { client_orderid, orderid })
  if (result._tag === "ActionRequired") throw new Error(`order still waits for the customer at ${result.redirectTo}`)
  step(`status → ${result.status}${result["transaction-type"] ? ` (last transaction: ${result["transaction-type"]})` : ""}`)
  return result
}

const simpleSale = (name: string, pan: string, expected: string): Flow => ({
  name,
  expected,
  run: async (env) => {
    const id = newId("sale")
    const ack = await env.pay.sale(saleFields(env, id, pan))
    step(`sale ${id} with card ${pan.slice(0, 6)}…${pan.slice(-4)} → ${ack.status ?? "accepted"}, orderid ${orderidOf(ack)}`)
    const done = await final(env.pay, id, orderidOf(ack))
    return { orderid: orderidOf(ack), finalStatus: done.status }
  }
})

const hostedForm = (name: string, start: (env: DemoEnv, id: string) => Promise<{ "redirect-url"?: string; "paynet-order-id"?: string | undefined }>, entry: Readonly<Record<string, string>>, expected: string): Flow => ({
  name,
  expected,
  simulatorOnly: "a hosted page needs a person to fill it in; only the embedded simulator's page is filled in by the tour",
  run: async (env) => {
    const id = newId("form")
    const ack = await start(env, id)
    const url = "statusReply" in ack ? (ack.statusReply as { "redirect-to"?: string })["redirect-to"] : ack["redirect-url"]
    if (url === undefined) throw new Error("no redirect-url in the form reply")
    step(`form created, customer sent to ${linkText(env, url)}`)
    await payOnHostedPage(env, url, entry)
    step("customer filled the hosted page and came back")
    const done = await final(env.pay, id, orderidOf(ack))
    return { orderid: orderidOf(ack), finalStatus: done.status }
  }
})

const cardEntry = { ...card("4111111111111111") }

/** Every flow, in the order a new team would meet them. */
export const flows: ReadonlyArray<Flow> = [
  simpleSale("sale", "4111111111111111", "approved"),
  simpleSale("declined sale", "4000000000000002", "declined"),
  {
    name: "3-D Secure sale",
    expected: "approved",
    simulatorOnly: "the issuer's challenge needs a person; only the embedded simulator's challenge is answered by the tour",
    run: async (env) => {
      const id = newId("3ds")
      const ack = await env.pay.sale(saleFields(env, id, "4000000000003220"))
      const redirect = ack.type === "reconciled" ? ack.statusReply["redirect-to"] : ack["redirect-url"]
      if (redirect === undefined) throw new Error("a 3DS card must answer with a redirect-url")
      step(`sale → ${ack.status}; customer sent to the access-control page`)
      await answerChallenge(env, redirect, true)
      step("customer passed the challenge; the browser posted the signed result back to the shop")
      const done = await final(env.pay, id, orderidOf(ack))
      return { orderid: orderidOf(ack), finalStatus: done.status }
    }
  },
  {
    name: "preauth → partial capture → partial return",
    expected: "approved (captured 20.00, returned 5.00)",
    run: async (env) => {
      const id = newId("auth")
      const ack = await env.pay.preauth(saleFields(env, id, "5555555555554444", "30.00"))
      const orderid = orderidOf(ack)
      step(`preauth 30.00 EUR → orderid ${orderid}`)
      await final(env.pay, id, orderid)
      await env.pay.capture({ client_orderid: id, orderid, amount: "20.00", currency: "EUR" })
      step("capture 20.00 EUR")
      await final(env.pay, id, orderid)
      await env.pay.return({ client_orderid: id, orderid, amount: "5.00", currency: "EUR", comment: "one item returned" })
      step("return 5.00 EUR")
      const done = await final(env.pay, id, orderid)
      return { orderid, finalStatus: `${done.status} (captured ${done["captured-amount"]}, returned ${done["returned-amount"]})` }
    }
  },
  {
    name: "void",
    expected: "approved (void)",
    run: async (env) => {
      const id = newId("void")
      const ack = await env.pay.preauth(saleFields(env, id, "4111111111111111", "12.00"))
      const orderid = orderidOf(ack)
      await final(env.pay, id, orderid)
      await env.pay.void({ client_orderid: id, orderid, comment: "customer cancelled" })
      step("void of the authorized preauth")
      const done = await final(env.pay, id, orderid)
      return { orderid, finalStatus: `${done.status} (${done["transaction-type"]})` }
    }
  },
  {
    name: "account verification",
    expected: "approved",
    run: async (env) => {
      const id = newId("verify")
      const { redirect_url: _r, ...rest } = urls(env)
      const ack = await env.pay.accountVerification({ client_orderid: id, order_desc: "card check", ...customer, ...card("4111111111111111"), ...rest })
      step("zero-amount authorization sent")
      const done = await final(env.pay, id, orderidOf(ack))
      return { orderid: orderidOf(ack), finalStatus: done.status }
    }
  },
  {
    name: "create-card-ref → get-card-info → make-rebill",
    expected: "approved",
    run: async (env) => {
      const first = newId("first")
      const ack = await env.pay.sale(saleFields(env, first, "4111111111111111", "9.99"))
      await final(env.pay, first, orderidOf(ack))
      const ref = await env.pay.createCardRef({ client_orderid: first, orderid: orderidOf(ack) })
      const cardrefid = "card-ref-id" in ref ? ref["card-ref-id"] : undefined
      if (cardrefid === undefined) throw new Error("create-card-ref gave no card-ref-id")
      step(`card reference ${cardrefid}`)
      const info = await env.pay.getCardInfo({ cardrefid })
      step(`card info: ${info["card-type"]} ${info["masked-pan"]} expires ${info["expire-month"]}/${info["expire-year"]}`)
      const id = newId("rebill")
      const rebill = await env.pay.makeRebill({ client_orderid: id, cardrefid, amount: "9.99", currency: "EUR", order_desc: "monthly box", ipaddress: customer.ipaddress, ...(env.serverCallbackUrl ? { server_callback_url: env.serverCallbackUrl } : {}) })
      step(`rebill 9.99 EUR without the cardholder → orderid ${orderidOf(rebill)}`)
      const done = await final(env.pay, id, orderidOf(rebill))
      return { orderid: `${orderidOf(ack)},${orderidOf(rebill)}`, finalStatus: done.status }
    }
  },
  {
    name: "one-step payout",
    expected: "approved",
    run: async (env) => {
      const id = newId("payout")
      const ack = await env.pay.payout({ client_orderid: id, amount: "50.00", currency: "EUR", order_desc: "winnings", credit_card_number: "4111111111111111", card_printed_name: "ADA LOVELACE", expire_month: "12", expire_year: "2030", ...(env.serverCallbackUrl ? { server_callback_url: env.serverCallbackUrl } : {}) })
      step("payout 50.00 EUR to a card (OAuth HMAC-SHA1)")
      const done = await final(env.pay, id, orderidOf(ack))
      return { orderid: orderidOf(ack), finalStatus: done.status }
    }
  },
  {
    name: "payout-check → payout-pay",
    expected: "approved",
    run: async (env) => {
      const id = newId("payout2")
      const check = await env.pay.payoutCheck({ client_orderid: id, amount: "75.00", currency: "EUR", order_desc: "refund to bank", account_number: "DE89370400440532013000", bank_name: "Demo Bank" })
      const orderid = orderidOf(check)
      step(`payout-check registered orderid ${orderid} (OAuth RSA-SHA256), no funds moved`)
      await env.pay.payoutPay({ client_orderid: id, orderid })
      step("payout-pay executed it")
      const done = await final(env.pay, id, orderid)
      return { orderid, finalStatus: done.status }
    }
  },
  hostedForm("sale-form", (env, id) => env.pay.saleForm(formFields(env, id)), cardEntry, "approved"),
  hostedForm("preauth-form", (env, id) => env.pay.preauthForm(formFields(env, id)), cardEntry, "approved"),
  hostedForm("payment-form", (env, id) => env.pay.paymentForm(formFields(env, id)), cardEntry, "approved"),
  hostedForm("account-verification-form", (env, id) => {
    const { amount: _a, currency: _c, ...rest } = formFields(env, id)
    return env.pay.accountVerificationForm(rest)
  }, cardEntry, "approved"),
  hostedForm("payout-form", (env, id) => env.pay.payoutForm({ client_orderid: id, amount: "15.00", currency: "EUR", order_desc: "cash-out", ...urls(env) }), { credit_card_number: "4111111111111111", card_printed_name: "ADA LOVELACE", expire_month: "12", expire_year: "2030" }, "approved"),
  {
    name: "status by client_orderid alone",
    expected: "approved",
    run: async (env) => {
      const id = newId("lookup")
      await env.pay.sale(saleFields(env, id, "4111111111111111", "3.00"))
      step(`forgot the orderid; asking status for client_orderid ${id}`)
      const done = await final(env.pay, id)
      return { orderid: done["paynet-order-id"], finalStatus: done.status }
    }
  },
  {
    name: "recurring payment without a schedule: process, update, process",
    expected: "2 charges approved, 4.50 then 6.00 EUR",
    run: async (env) => {
      const id = newId("rp-on-demand")
      const rp = await env.pay.createRecurringPayment({ ...subscriber(env, id), order_desc: "top-up on demand", amount: "4.50" })
      const rpId = rp.type === "reconciled" ? rp.statusReply["recurring-payment-id"] : rp["recurring-payment-id"]
      if (rpId === undefined) throw new Error("create-recurring-payment gave no recurring-payment-id")
      const rpOrder = orderidOf(rp.type === "reconciled" ? rp.statusReply : rp)
      step(`recurring payment ${rpId} (order ${rpOrder}): 4.50 EUR, no schedule: charged only when asked`)
      const charge = async (label: string) => {
        const chargeId = newId("rp-charge")
        await env.pay.processRecurringPayment({ "client-orderid": chargeId, "recurring-payment-id": rpId })
        step(`process-recurring-payment (OAuth RSA-SHA256): ${label}`)
        return final(env.pay, chargeId)
      }
      const first = await charge("charged now from the saved card")
      await env.pay.updateRecurringPayment({ "client-orderid": newId("rp-update"), "recurring-payment-id": rpId, amount: "6.00" })
      step("update-recurring-payment: the amount is now 6.00 EUR")
      const second = await charge("charged again at the new amount")
      const approved = [first, second].filter((f) => f.status === "approved")
      return {
        orderid: [rpOrder, first["paynet-order-id"], second["paynet-order-id"]].join(","),
        finalStatus: `${approved.length} charges approved, ${first.amount} then ${second.amount} EUR`
      }
    }
  },
  {
    name: "chargeback 30 days after settlement",
    expected: "charged-back 25.00 EUR",
    simulatorOnly: "a chargeback comes 30 days after settlement; only the embedded simulator's clock gets there",
    run: async (env) => {
      const id = newId("chargeback")
      const ack = await env.pay.sale(saleFields(env, id, "4000000000001976"))
      step(`sale with the chargeback test card ${"4000000000001976".slice(0, 6)}…1976 → orderid ${orderidOf(ack)}`)
      await final(env.pay, id, orderidOf(ack))
      await env.simulator!.clock.advance(32 * 24 * 3600_000)
      step("simulator clock advanced by 32 days: settled after one, charged back 30 days later")
      const done = await final(env.pay, id, orderidOf(ack))
      step(`money outcome: ${done.outcome}, chargeback-amount ${done["chargeback-amount"] ?? "none"}`)
      return { orderid: orderidOf(ack), finalStatus: `${done.outcome} ${done["chargeback-amount"] ?? "?"} EUR` }
    }
  },
  {
    name: "recurring payment, clock advanced two periods",
    expected: "2 charges approved",
    simulatorOnly: "the schedule runs on the embedded simulator's clock, advanced two periods",
    run: async (env) => {
      const sim = env.simulator!
      const id = newId("rp")
      const rp = await env.pay.createRecurringPayment({ ...subscriber(env, id), order_desc: "weekly coffee", amount: "4.50", period: "week", interval: "1" })
      const rpId = rp.type === "reconciled" ? rp.statusReply["recurring-payment-id"] : rp["recurring-payment-id"]
      const rpOrder = orderidOf(rp.type === "reconciled" ? rp.statusReply : rp)
      step(`recurring payment ${rpId} (order ${rpOrder}): 4.50 EUR every week`)
      await sim.clock.advance(2 * 7 * 24 * 3600_000 + 60_000)
      step("simulator clock advanced by two weeks")
      const charges = sim.orders().filter((o) => o.recurringPaymentId === rpId && o.kind === "rebill")
      for (const c of charges) await final(env.pay, c.client_orderid, c.orderid)
      const approved = sim.orders().filter((o) => o.recurringPaymentId === rpId && o.kind === "rebill" && o.status === "approved")
      return { orderid: [rpOrder, ...charges.map((c) => c.orderid)].join(","), finalStatus: `${approved.length} charges approved` }
    }
  }
]
