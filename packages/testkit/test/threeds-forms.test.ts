import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Schema } from "effect"
import { ServerCallback } from "@paykit/contracts"
import { verifyCallbackControl } from "@paykit/signing"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

let sim: Simulator
let receiver: ReturnType<typeof callbackReceiver>
beforeEach(() => {
  receiver = callbackReceiver()
  sim = createSimulator({ callbackFetch: receiver.fetch })
})
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const login = testMerchant.login
const THREEDS = "4000000000003220"

/** A plain-HTTP "browser": GET a page, POST a form. */
async function get(url: string): Promise<Response> {
  return sim.fetch(new Request(url))
}
async function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  return sim.fetch(new Request(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() }))
}

/** The hidden fields of the final-redirect form, and its action. */
function finalRedirect(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form id="final-redirect" method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(html)
  expect(form).not.toBeNull()
  const fields: Record<string, string> = {}
  for (const m of form![2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = decode(m[2]!)
  return { action: decode(form![1]!), fields }
}
function decode(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
}

function expectSignedRedirect(fields: Record<string, string>, status: string) {
  // The final redirect carries the ServerCallback fields (plus the gateway's card-holder-name).
  const { "card-holder-name": _holder, ...callbackFields } = fields
  Schema.decodeUnknownSync(ServerCallback, { errors: "all", onExcessProperty: "error" })(callbackFields)
  expect(fields["status"]).toBe(status)
  const check = verifyCallbackControl({ status: fields["status"]!, orderid: fields["orderid"]!, client_orderid: fields["client_orderid"]! }, fields["control"], testMerchant.controlKey)
  expect(check.ok).toBe(true)
  expect(fields["merchant_order"]).toBe(fields["client_orderid"])
}

async function threeDSSale() {
  const fields = requests.sale({ credit_card_number: THREEDS, server_callback_url: "https://merchant.example/cb" })
  const reply = await signedRequest(sim, "SALE", fields)
  return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid, acs: String(reply.body["redirect-url"]) }
}

describe("3-D Secure via the ACS page", () => {
  it("pass → approved, signed final redirect to redirect_url, callback", async () => {
    const { orderid, client_orderid, acs } = await threeDSSale()
    const page = await get(acs)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('name="result" value="pass"')
    expect(html).toContain('name="result" value="fail"')
    expect(html).not.toContain(THREEDS)
    const done = await postForm(acs, { result: "pass" })
    const redirect = finalRedirect(await done.text())
    expect(redirect.action).toBe("https://merchant.example/return")
    expectSignedRedirect(redirect.fields, "approved")
    expect(redirect.fields).toMatchObject({ orderid, client_orderid, amount: "10.00", currency: "USD", type: "sale" })
    expect((await statusOf(sim, orderid, client_orderid)).status).toBe("approved")
    await sim.clock.advance(0)
    expect(receiver.received).toHaveLength(1)
    // The challenge is over: the page no longer offers it.
    expect((await get(acs)).status).toBe(409)
  })

  it("fail → declined", async () => {
    const { orderid, client_orderid, acs } = await threeDSSale()
    const redirect = finalRedirect(await (await postForm(acs, { result: "fail" })).text())
    expectSignedRedirect(redirect.fields, "declined")
    expect(await statusOf(sim, orderid, client_orderid)).toMatchObject({ status: "declined", "error-message": "3-D Secure authentication failed" })
  })
})

describe("3-D Secure uploads (state machine)", () => {
  const cres = (ids: { orderid: string; client_orderid: string }, cRes: string) =>
    signedRequest(sim, "TDS_UPLOAD_CRES_RESULT", requests.uploadCresResult({ orderid: ids.orderid, "client-order-id": ids.client_orderid, cRes }))
  const method = (ids: { orderid: string; client_orderid: string }, ind: "Y" | "N" | "U" = "Y") =>
    signedRequest(sim, "TDS_UPLOAD_METHOD_URL_RESULT", requests.uploadMethodUrlResult({ orderid: ids.orderid, "client-order-id": ids.client_orderid, threeDSCompInd: ind }))
  const pares = (ids: { orderid: string; client_orderid: string }, paRes: string) =>
    signedRequest(sim, "TDS_UPLOAD_PARES_RESULT", requests.uploadParesResult({ orderid: ids.orderid, "client-order-id": ids.client_orderid, paRes }))

  it("method → challenge → CRes Y → approved after the processing delay", async () => {
    const ids = await threeDSSale()
    expect((await method(ids, "N")).body).toMatchObject({ type: "async-response", status: "processing" })
    expect(sim.order(ids.orderid)?.threeDS).toBe("challenge")
    const yes = Buffer.from(JSON.stringify({ transStatus: "Y" })).toString("base64url")
    expect((await cres(ids, yes)).status).toBe(200)
    expect(sim.order(ids.orderid)?.threeDS).toBe("passed")
    await sim.clock.advance(2000)
    expect((await statusOf(sim, ids.orderid, ids.client_orderid)).status).toBe("approved")
  })

  it("CRes N → declined", async () => {
    const ids = await threeDSSale()
    await method(ids, "U")
    await cres(ids, "N")
    await sim.clock.advance(2000)
    expect((await statusOf(sim, ids.orderid, ids.client_orderid)).status).toBe("declined")
  })

  it("PaRes (3DS 1.0.2) from the method state", async () => {
    const ids = await threeDSSale()
    expect((await pares(ids, "Y")).status).toBe(200)
    await sim.clock.advance(2000)
    expect((await statusOf(sim, ids.orderid, ids.client_orderid)).status).toBe("approved")
  })

  it("uploads that do not fit → threeds-state", async () => {
    const ids = await threeDSSale()
    expectError(await cres(ids, "Y"), "threeds-state") // CRes before the method step
    await method(ids)
    expectError(await method(ids), "threeds-state") // method twice
    await cres(ids, "Y")
    expectError(await cres(ids, "Y"), "threeds-state") // after the result
    expectError(await pares(ids, "Y"), "threeds-version-mismatch") // a 3DS 1 PaRes on this 3DS 2 flow
    const plain = requests.sale()
    const sale = await signedRequest(sim, "SALE", plain)
    expectError(await method({ orderid: String(sale.body["paynet-order-id"]), client_orderid: plain.client_orderid }), "threeds-state") // no 3DS
  })

  it("uploads for an unknown order → order-not-found", async () => {
    expectError(await method({ orderid: "42", client_orderid: "nope" }), "order-not-found")
  })
})

describe("hosted forms", () => {
  async function openForm(op: "SALEFORM" | "PREAUTHFORM" | "PAYMENTFORM" | "ACCOUNT_VERIFICATION_FORM", overrides: Record<string, string> = {}) {
    const fields = op === "SALEFORM" ? requests.saleForm(overrides)
      : op === "PREAUTHFORM" ? requests.preauthForm(overrides)
      : op === "PAYMENTFORM" ? requests.paymentForm(overrides)
      : requests.accountVerificationForm(overrides)
    const reply = await signedRequest(sim, op, fields)
    expect(reply.body).toMatchObject({ type: "async-form-response", status: "processing", "merchant-order-id": fields.client_orderid })
    return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid, url: String(reply.body["redirect-url"]) }
  }
  const card = { credit_card_number: "4111111111111111", card_printed_name: "TEST CUSTOMER", expire_month: "12", expire_year: "2099", cvv2: "123" }

  it.each(["SALEFORM", "PREAUTHFORM", "PAYMENTFORM", "ACCOUNT_VERIFICATION_FORM"] as const)("%s: form page → card → final redirect approved", async (op) => {
    const { orderid, client_orderid, url } = await openForm(op)
    expect(await statusOf(sim, orderid, client_orderid)).toMatchObject({ status: "processing", "redirect-to": url })
    const page = await get(url)
    expect(await page.text()).toContain('name="credit_card_number"')
    const done = await postForm(url, card)
    expect(done.status).toBe(200)
    expectSignedRedirect(finalRedirect(await done.text()).fields, "approved")
    const status = await statusOf(sim, orderid, client_orderid)
    expect(status).toMatchObject({ status: "approved", "last-four-digits": "1111" })
  })

  it("invalid card data re-renders the form with field errors, never echoing PAN or CVV", async () => {
    const { url } = await openForm("SALEFORM")
    const res = await postForm(url, { ...card, credit_card_number: "4111111111111112", expire_year: "2001", cvv2: "12" })
    expect(res.status).toBe(400)
    const html = await res.text()
    expect(html).toContain('data-field="credit_card_number"')
    expect(html).toContain('data-field="expire_year"')
    expect(html).toContain('data-field="cvv2"')
    expect(html).not.toContain("4111111111111112")
    expect(html).toContain('name="cvv2" value=""')
    expect(html).toContain('name="credit_card_number" value=""')
  })

  it("a 3DS card continues to the ACS page, then the final redirect", async () => {
    const { orderid, client_orderid, url } = await openForm("SALEFORM")
    const res = await postForm(url, { ...card, credit_card_number: THREEDS })
    expect(res.status).toBe(303)
    const acs = res.headers.get("location")!
    expect(acs).toContain(`/__sim/acs/${orderid}`)
    const redirect = finalRedirect(await (await postForm(acs, { result: "pass" })).text())
    expectSignedRedirect(redirect.fields, "approved")
    expect((await statusOf(sim, orderid, client_orderid)).status).toBe("approved")
  })

  it("a declining card declines; the form cannot be submitted twice", async () => {
    const { orderid, client_orderid, url } = await openForm("SALEFORM")
    const done = await postForm(url, { ...card, credit_card_number: "4000000000000002" })
    expectSignedRedirect(finalRedirect(await done.text()).fields, "declined")
    expect((await statusOf(sim, orderid, client_orderid)).status).toBe("declined")
    const again = await postForm(url, card)
    expectSignedRedirect(finalRedirect(await again.text()).fields, "declined")
  })

  it("payout-form collects exactly one destination", async () => {
    const fields = requests.payoutForm()
    const reply = await signedRequest(sim, "PAYOUTFORM", fields)
    expect(reply.body.type).toBe("async-form-response")
    const url = String(reply.body["redirect-url"])
    const none = await postForm(url, {})
    expect(none.status).toBe(400)
    expect(await none.text()).toContain('data-field="destination"')
    const two = await postForm(url, { account_number: "DE89370400440532013000", destination_phone: "+4930123456" })
    expect(two.status).toBe(400)
    const ok = await postForm(url, { account_number: "DE89370400440532013000" })
    expectSignedRedirect(finalRedirect(await ok.text()).fields, "approved")
    expect(sim.order(String(reply.body["paynet-order-id"]))).toMatchObject({ kind: "payout", status: "approved" })
  })

  it("unknown pages are 404", async () => {
    expect((await get("http://sim.test/__sim/form/123")).status).toBe(404)
    expect((await get("http://sim.test/__sim/acs/123")).status).toBe(404)
  })

  it("status while the form waits names it; idempotent repeat of the form request", async () => {
    const fields = requests.saleForm()
    const a = await signedRequest(sim, "SALEFORM", fields)
    const b = await signedRequest(sim, "SALEFORM", fields)
    const { "serial-number": _sa, ...aRest } = a.body
    const { "serial-number": _sb, ...bRest } = b.body
    expect(bRest).toEqual(aRest)
    expectError(await signedRequest(sim, "SALEFORM", { ...fields, amount: "99.00" }), "client-orderid-conflict")
    void login
  })
})
