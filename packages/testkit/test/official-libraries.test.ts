/**
 * The simulator against the gateway's official libraries, reimplemented here from their source
 * and independent of @paykit/signing (plain node:crypto SHA-1, our own form building):
 *
 * 1. Requests as payneteasy/php-library-payneteasy-api builds them, accepted:
 *    - field order of each Query's `$requestFieldsDefinition` (Query/SaleQuery.php,
 *      Query/ReturnQuery.php, Query/StatusQuery.php, Query/CreateCardRefQuery.php,
 *      Query/MakeRebillQuery.php), sent as `http_build_query` (Transport/GatewayClient.php);
 *    - control = sha1 of the `$controlCodeDefinition` values then the key, lowercase hex; the
 *      amount in it is `(int) ($amount * 100)` for every currency (PaymentData/Payment.php
 *      getAmountInCents): 1000 JPY → 100000, 10.5 KWD → 1050;
 *    - the amount field as PHP prints the float (`1000`, `10.5`), `expire_year` of 1-2 digits
 *      (Util/Validator.php YEAR `^[0-9]{1,2}$`), the group path form `{command}/group/{id}` with
 *      the group id as `end_point` in the digest (Transport/GatewayClient.php, per
 *      shared/reference/gateway-facts.md §5 and §7).
 *    The one header added: `Accept: application/vnd.pay+json` (the library asks for the gateway's
 *    form-urlencoded replies; the interface's JSON is opt-in by this header, the only thing the
 *    simulator serves).
 * 2. Every callback the simulator sends (sale, declined sale, two equal partial returns, a full
 *    return, a chargeback, payouts to a card and to a wallet, a two-step payout) passes:
 *    - the PHP library's check (Callback/AbstractCallback.php validateCallback + validateSignature,
 *      fields of Callback/PaynetEasyCallback.php / ServerCallbackUrlCallback.php): control =
 *      sha1(status + orderid + client_orderid + key) compared with `!==`; status in approved,
 *      declined, filtered, error; orderid, merchant_order, client_orderid, amount, status, type,
 *      control all non-empty (PHP `empty()`), and orderid / merchant_order / client_orderid /
 *      amount loosely equal (`!=`) to the merchant's own payment record; and its
 *      Callback/CallbackFactory.php, which routes `sale`, `reversal` and `chargeback`;
 *    - the Hosted Fields examples' check (payneteasy/hosted-fields-examples,
 *      nodejs-express-js/src/callback.js validCallback): sha1(status + orderid + merchant_order + key).
 *    The 2013 PHP factory has no class for `payout` callbacks (it throws "Unknown callback class");
 *    those get the same field and signature check, the one the factory would run for them.
 */
import { createHash } from "node:crypto"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { signedRequest } from "./helpers"

const KEY = testMerchant.controlKey
const LOGIN = testMerchant.login
const ENDPOINT = String(testMerchant.endpointId)
const GROUP = String(testMerchant.endpointGroupId)
const CALLBACK_URL = "https://merchant.example/paynet/callback"

const sha1 = (text: string): string => createHash("sha1").update(text, "utf8").digest("hex")
/** PHP's `(int) ($amount * 100)` on the float the library holds (truncation included). */
const amountInCents = (amount: number): string => String(Math.trunc(amount * 100))
/** How PHP prints a float into the form (`1000`, `10.5`): the shortest round-trip form, as JS does for these values. */
const phpFloat = (amount: number): string => String(amount)

/**
 * The library's Query: fields in `$requestFieldsDefinition` order, the generated control (over
 * `$controlCodeDefinition`, then the key) where the definition lists it, then the fields it takes
 * "from config" (login, redirect_url, server_callback_url).
 */
function libraryRequest(command: string, endPoint: { group?: string; id?: string }, fields: Array<[string, string]>, control: string[], config: Array<[string, string]> = []): Request {
  const body = new URLSearchParams()
  for (const [name, value] of fields) body.append(name, value)
  body.append("control", sha1(control.join("") + KEY))
  for (const [name, value] of config) body.append(name, value)
  const path = endPoint.group !== undefined ? `${command}/group/${endPoint.group}` : `${command}/${endPoint.id ?? ENDPOINT}`
  return new Request(`http://sim.test/api/v2/${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/vnd.pay+json" },
    body: body.toString()
  })
}

interface Payment {
  readonly clientId: string
  readonly currency: string
  readonly amount: number
  readonly email: string
}

/** Query/SaleQuery.php: mandatory fields in order, then control, then the config's redirect_url and server_callback_url. */
function saleRequest(p: Payment, endPoint: { group?: string; id?: string }, card = "4111111111111111"): Request {
  const fields: Array<[string, string]> = [
    ["client_orderid", p.clientId],
    ["order_desc", "Official library order"],
    ["amount", phpFloat(p.amount)],
    ["currency", p.currency],
    ["ipaddress", "203.0.113.7"],
    ["address1", "2704 Colonial Drive"],
    ["city", "Houston"],
    ["zip_code", "1235"],
    ["country", "US"],
    ["phone", "660-485-6353"],
    ["email", p.email],
    ["card_printed_name", "Vasya Pupkin"],
    ["credit_card_number", card],
    ["expire_month", "12"],
    ["expire_year", "30"],
    ["cvv2", "123"],
    ["state", "TX"]
  ]
  return libraryRequest("sale", endPoint, fields, [endPoint.group ?? endPoint.id ?? ENDPOINT, p.clientId, amountInCents(p.amount), p.email], [["redirect_url", "https://merchant.example/return"], ["server_callback_url", CALLBACK_URL]])
}

async function send(sim: Simulator, request: Request): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await sim.fetch(request)
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

let sim: Simulator
const callbacks: Array<Record<string, string>> = []

beforeEach(() => {
  callbacks.length = 0
  sim = createSimulator({
    startTime: Date.UTC(2031, 2, 3, 10),
    callbackFetch: (async (input: RequestInfo | URL) => {
      const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
      callbacks.push(Object.fromEntries(url.searchParams))
      return new Response("OK", { status: 200 })
    }) as typeof fetch
  })
})
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

let n = 0
const clientId = (tag: string) => `lib-${tag}-${++n}`

describe("requests exactly as the official PHP library builds them are accepted", () => {
  it("sale in JPY and KWD with cents digests, a 2-digit year, on the endpoint and on the group path form; status", async () => {
    const jpy: Payment = { clientId: clientId("jpy"), currency: "JPY", amount: 1000, email: "vass.pupkin@example.com" }
    const kwd: Payment = { clientId: clientId("kwd"), currency: "KWD", amount: 10.5, email: "vass.pupkin@example.com" }
    // The library's cents, for these amounts, are exact (no float truncation involved).
    expect([amountInCents(jpy.amount), amountInCents(kwd.amount)]).toEqual(["100000", "1050"])
    const a = await send(sim, saleRequest(jpy, { id: ENDPOINT }))
    const b = await send(sim, saleRequest(kwd, { group: GROUP }))
    expect(a).toMatchObject({ status: 200, body: { type: "async-response", status: "processing" } })
    expect(b).toMatchObject({ status: 200, body: { type: "async-response", status: "processing" } })
    await sim.clock.advance(2000)
    const orderA = sim.order(String(a.body["paynet-order-id"]))
    const orderB = sim.order(String(b.body["paynet-order-id"]))
    // The amounts are the major units sent (1000 yen, 10.500 dinars), the year the four-digit one.
    expect(orderA).toMatchObject({ status: "approved", amount: "1000", currency: "JPY", card: { expireYear: "2030" } })
    expect(orderB).toMatchObject({ status: "approved", amount: "10.500", currency: "KWD", endpointId: GROUP })
    // Query/StatusQuery.php: client_orderid, orderid, control, login; control login + client_orderid + orderid.
    const orderid = String(b.body["paynet-order-id"])
    const status = await send(sim, libraryRequest("status", { group: GROUP }, [["client_orderid", kwd.clientId], ["orderid", orderid]], [LOGIN, kwd.clientId, orderid], [["login", LOGIN]]))
    expect(status).toMatchObject({ status: 200, body: { type: "status-response", status: "approved", amount: "10.500" } })
  })

  it("partial returns (Query/ReturnQuery.php) in KWD and a card ref + make-rebill in JPY", async () => {
    const kwd: Payment = { clientId: clientId("ret"), currency: "KWD", amount: 10.5, email: "a@example.com" }
    const sale = await send(sim, saleRequest(kwd, { id: ENDPOINT }))
    await sim.clock.advance(2000)
    const orderid = String(sale.body["paynet-order-id"])
    for (const amount of [2.25, 2.25]) {
      const reply = await send(sim, libraryRequest("return", { id: ENDPOINT }, [["client_orderid", kwd.clientId], ["orderid", orderid], ["amount", phpFloat(amount)], ["currency", "KWD"], ["comment", "customer asked"]], [LOGIN, kwd.clientId, orderid, amountInCents(amount), "KWD"], [["login", LOGIN]]))
      expect(reply).toMatchObject({ status: 200, body: { type: "async-response" } })
      await sim.clock.advance(2000)
    }
    expect(sim.order(orderid)).toMatchObject({ returned: "4.500" })

    // Query/CreateCardRefQuery.php: login + client_orderid + orderid; then make-rebill signed
    // login + client_orderid + cardrefid + amount in cents + currency (PHP library commit 484bbc7).
    const jpy: Payment = { clientId: clientId("ref"), currency: "JPY", amount: 500, email: "b@example.com" }
    const first = await send(sim, saleRequest(jpy, { id: ENDPOINT }))
    await sim.clock.advance(2000)
    const firstId = String(first.body["paynet-order-id"])
    const ref = await send(sim, libraryRequest("create-card-ref", { id: ENDPOINT }, [["client_orderid", jpy.clientId], ["orderid", firstId]], [LOGIN, jpy.clientId, firstId], [["login", LOGIN]]))
    expect(ref).toMatchObject({ status: 200, body: { type: "create-card-ref-response" } })
    const cardrefid = String(ref.body["card-ref-id"])
    const rebillId = clientId("rebill")
    const rebill = await send(sim, libraryRequest("make-rebill", { id: ENDPOINT }, [["client_orderid", rebillId], ["order_desc", "monthly"], ["amount", phpFloat(1200)], ["currency", "JPY"], ["ipaddress", "203.0.113.7"], ["cardrefid", cardrefid]], [LOGIN, rebillId, cardrefid, amountInCents(1200), "JPY"], [["login", LOGIN], ["server_callback_url", CALLBACK_URL]]))
    expect(rebill).toMatchObject({ status: 200, body: { type: "async-response" } })
    await sim.clock.advance(2000)
    expect(sim.order(String(rebill.body["paynet-order-id"]))).toMatchObject({ status: "approved", amount: "1200" })
  })

  it("the same request with the ISO-exponent digest (1000 JPY → 1000) is refused: the library's cents are the default", async () => {
    const jpy: Payment = { clientId: clientId("iso"), currency: "JPY", amount: 1000, email: "c@example.com" }
    const fields: Array<[string, string]> = [["client_orderid", jpy.clientId], ["order_desc", "x"], ["amount", "1000"], ["currency", "JPY"], ["ipaddress", "203.0.113.7"], ["address1", "a"], ["city", "b"], ["zip_code", "1"], ["country", "US"], ["phone", "660-485-6353"], ["email", jpy.email], ["card_printed_name", "V P"], ["credit_card_number", "4111111111111111"], ["expire_month", "12"], ["expire_year", "30"], ["cvv2", "123"]]
    const reply = await send(sim, libraryRequest("sale", { id: ENDPOINT }, fields, [ENDPOINT, jpy.clientId, "1000", jpy.email], [["redirect_url", "https://merchant.example/return"]]))
    expect(reply).toMatchObject({ status: 400, body: { "error-code": "control-mismatch" } })
  })
})

/** PHP `empty()` of a query value: absent, "" and "0". */
const phpEmpty = (value: string | undefined): boolean => value === undefined || value === "" || value === "0"
/** PHP `!=` of a record value and a callback string: numeric strings compare as numbers. */
const phpLooseEqual = (property: string | number, value: string): boolean => {
  const numeric = (v: string | number) => typeof v === "number" || /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)
  return numeric(property) && numeric(value) ? Number(property) === Number(value) : String(property) === value
}

/** The merchant's own record of the transaction a callback is about (the PHP library's PaymentTransaction->payment). */
interface Record_ {
  readonly orderid: string
  readonly clientId: string
  readonly amount: number
  readonly type: string
}

/** Callback/AbstractCallback.php validateCallback (signature, status, fields) with PaynetEasyCallback's field list. */
function phpLibraryCheck(callback: Record<string, string>, record: Record_): string[] {
  const problems: string[] = []
  const expected = sha1(`${callback["status"] ?? ""}${callback["orderid"] ?? ""}${callback["client_orderid"] ?? ""}${KEY}`)
  if (expected !== callback["control"]) problems.push("control")
  if (!["approved", "declined", "filtered", "error"].includes(callback["status"] ?? "")) problems.push("status")
  const fields: Array<[string, string | number | null]> = [
    ["orderid", record.orderid],
    ["merchant_order", record.clientId],
    ["client_orderid", record.clientId],
    ["amount", record.amount],
    ["status", null],
    ["type", null],
    ["control", null]
  ]
  for (const [name, property] of fields) {
    const value = callback[name]
    if (phpEmpty(value)) problems.push(`missing ${name}`)
    else if (property !== null && !phpLooseEqual(property, value!)) problems.push(`unequal ${name}`)
  }
  return problems
}

/** Callback/CallbackFactory.php: which callback class the type reaches (the server-callback types). */
const phpFactoryRoutes = (type: string): boolean => ["sale", "reversal", "chargeback"].includes(type)

/** hosted-fields-examples nodejs-express-js/src/callback.js validCallback. */
function hostedFieldsCheck(source: Record<string, string>): boolean {
  const field = (name: string) => String(source[name] ?? "")
  return field("control") === sha1(field("status") + field("orderid") + field("merchant_order") + KEY)
}

describe("every callback the simulator sends passes the official libraries' callback checks", () => {
  it("sale, declined sale, equal partial returns, full return, chargeback, payouts (card, wallet, two-step)", async () => {
    const records: Record_[] = []
    // Sales as the library sends them (server_callback_url from its config).
    const usd: Payment = { clientId: clientId("cb-usd"), currency: "USD", amount: 10.5, email: "d@example.com" }
    const sale = await send(sim, saleRequest(usd, { id: ENDPOINT }))
    const saleId = String(sale.body["paynet-order-id"])
    records.push({ orderid: saleId, clientId: usd.clientId, amount: 10.5, type: "sale" })
    const declined: Payment = { clientId: clientId("cb-declined"), currency: "USD", amount: 3, email: "d@example.com" }
    const declinedId = String((await send(sim, saleRequest(declined, { id: ENDPOINT }, "4000000000000002"))).body["paynet-order-id"])
    records.push({ orderid: declinedId, clientId: declined.clientId, amount: 3, type: "sale" })
    const kwd: Payment = { clientId: clientId("cb-kwd"), currency: "KWD", amount: 10.5, email: "d@example.com" }
    const kwdId = String((await send(sim, saleRequest(kwd, { group: GROUP }))).body["paynet-order-id"])
    records.push({ orderid: kwdId, clientId: kwd.clientId, amount: 10.5, type: "sale" })
    await sim.clock.advance(2000)

    // Two equal partial returns of the USD sale, then the rest of it; as the library does it, the
    // payment's amount is the one being returned.
    for (const amount of [2, 2, 6.5]) {
      await send(sim, libraryRequest("return", { id: ENDPOINT }, [["client_orderid", usd.clientId], ["orderid", saleId], ["amount", phpFloat(amount)], ["currency", "USD"], ["comment", "refund"]], [LOGIN, usd.clientId, saleId, amountInCents(amount), "USD"], [["login", LOGIN]]))
      records.push({ orderid: saleId, clientId: usd.clientId, amount, type: "reversal" })
      await sim.clock.advance(2000)
    }

    // A chargeback of the whole settled KWD sale (decision 17's test route).
    await sim.clock.advance(24 * 60 * 60 * 1000)
    const chargeback = await sim.fetch(new Request(`http://sim.test/__sim/orders/${kwdId}/chargeback`, { method: "POST" }))
    expect(chargeback.status).toBe(200)
    records.push({ orderid: kwdId, clientId: kwd.clientId, amount: 10.5, type: "chargeback" })

    // Payouts (OAuth; not built by the PHP library): to a card, to a wallet, and check-then-pay.
    for (const fields of [
      requests.payout({ server_callback_url: CALLBACK_URL }),
      requests.payout({ credit_card_number: undefined, card_printed_name: undefined, expire_month: undefined, expire_year: undefined, wallet_id: "W-9", server_callback_url: CALLBACK_URL })
    ]) {
      const reply = await signedRequest(sim, "PAYOUT", fields)
      records.push({ orderid: String(reply.body["paynet-order-id"]), clientId: fields.client_orderid, amount: Number(fields.amount), type: "payout" })
    }
    const check = requests.payoutCheck({ amount: "7.25", server_callback_url: CALLBACK_URL })
    const checked = await signedRequest(sim, "PAYOUT_V4_CHECK", check)
    const checkedId = String(checked.body["paynet-order-id"])
    await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay({ orderid: checkedId, client_orderid: check.client_orderid }))
    records.push({ orderid: checkedId, clientId: check.client_orderid, amount: 7.25, type: "payout" })
    await sim.clock.advance(2000)

    // One callback per transaction, each matched to the merchant's record of it.
    expect(callbacks).toHaveLength(records.length)
    const unused = new Set(callbacks.keys())
    for (const record of records) {
      const index = [...unused].find((i) => callbacks[i]!["type"] === record.type && phpLibraryCheck(callbacks[i]!, record).length === 0)
      expect(index, `no callback passes the PHP library's check for ${JSON.stringify(record)}: ${JSON.stringify(callbacks.filter((c) => c["orderid"] === record.orderid).map((c) => phpLibraryCheck(c, record)))}`).toBeDefined()
      unused.delete(index!)
    }
    for (const callback of callbacks) {
      expect(hostedFieldsCheck(callback), JSON.stringify(callback)).toBe(true)
      // The factory routes every type but payout (a class the 2013 library never had).
      expect(phpFactoryRoutes(callback["type"]!) || callback["type"] === "payout").toBe(true)
    }
    expect(callbacks.map((c) => c["type"]).sort()).toEqual(["chargeback", "payout", "payout", "payout", "reversal", "reversal", "reversal", "sale", "sale", "sale"])
    // The two equal partial returns are distinct callbacks (decision 11), each passing the check.
    const equalReturns = callbacks.filter((c) => c["type"] === "reversal" && c["amount"] === "2.00")
    expect(equalReturns).toHaveLength(2)
    expect(equalReturns[0]!["approval-code"]).not.toBe(equalReturns[1]!["approval-code"])
  })

  it("the checks are real: a tampered callback fails both", () => {
    const callback = { status: "approved", orderid: "77", merchant_order: "c-1", client_orderid: "c-1", type: "sale", amount: "10.00", control: sha1(`approved77c-1${KEY}`) }
    const record = { orderid: "77", clientId: "c-1", amount: 10, type: "sale" }
    expect(phpLibraryCheck(callback, record)).toEqual([])
    expect(hostedFieldsCheck(callback)).toBe(true)
    expect(phpLibraryCheck({ ...callback, status: "declined" }, record)).toContain("control")
    expect(hostedFieldsCheck({ ...callback, status: "declined" })).toBe(false)
    expect(phpLibraryCheck({ ...callback, amount: "10.01" }, record)).toEqual(["unequal amount"])
    expect(phpLibraryCheck({ ...callback, control: callback.control.toUpperCase() }, record)).toEqual(["control"])
    const { merchant_order: _m, ...withoutMerchantOrder } = callback
    expect(phpLibraryCheck(withoutMerchantOrder, record)).toEqual(["missing merchant_order"])
  })
})
