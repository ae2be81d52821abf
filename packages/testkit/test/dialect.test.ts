import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { expectError, signedRequest, statusOf } from "./helpers"

let sim: Simulator
beforeEach(() => {
  sim = createSimulator({ processingDelayMs: 0, startTime: Date.UTC(2026, 5, 15) })
})
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

async function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  return sim.fetch(new Request(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() }))
}

describe("expire_year with 2 or 4 digits (decision 15)", () => {
  it("a sale with a 2-digit year is accepted; 30 means 2030, kept and answered with four digits", async () => {
    const fields = requests.sale({ expire_year: "30" })
    const reply = await signedRequest(sim, "SALE", fields)
    expect(reply.status).toBe(200)
    const orderid = String(reply.body["paynet-order-id"])
    await sim.clock.advance(0)
    expect(sim.order(orderid)!.card).toMatchObject({ expireYear: "2030" })
    expect(await statusOf(sim, orderid, fields.client_orderid)).toMatchObject({ status: "approved", "card-exp-year": "2030" })
  })

  it("a 4-digit year still works, and 1 or 3 digits are a 400 naming expire_year", async () => {
    expect((await signedRequest(sim, "SALE", requests.sale({ expire_year: "2031" }))).status).toBe(200)
    for (const year of ["3", "030", "20301"]) {
      const reply = await signedRequest(sim, "SALE", requests.sale({ expire_year: year }))
      expectError(reply, "invalid-field")
      expect(String(reply.body["error-message"])).toContain("expire_year")
    }
  })

  it("a v4 request's expire-year takes 2 digits too", async () => {
    const reply = await signedRequest(sim, "CREATE_RP_V4", requests.createRecurringPayment({ "expire-year": "31" }))
    expect(reply.status).toBe(200)
  })

  it("the hosted form takes a 2-digit year and still refuses an expired card", async () => {
    const open = async () => String((await signedRequest(sim, "SALEFORM", requests.saleForm())).body["redirect-url"])
    const card = { credit_card_number: "4111111111111111", card_printed_name: "A B", expire_month: "12", cvv2: "123" }
    const expired = await postForm(await open(), { ...card, expire_month: "05", expire_year: "26" }) // May 2026 < June 2026
    expect(expired.status).toBe(400)
    expect(await expired.text()).toContain("The card has expired")
    const bad = await postForm(await open(), { ...card, expire_year: "203" })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain("two or four digits")
    const thisMonth = await postForm(await open(), { ...card, expire_month: "06", expire_year: "26" })
    expect(thisMonth.status).toBe(200)
    const ok = await postForm(await open(), { ...card, expire_year: "30" })
    expect(ok.status).toBe(200)
    const last = sim.orders().at(-1)!
    expect(last.card).toMatchObject({ expireYear: "2030" })
  })
})

describe("endpoint-group path form /…/group/{endpointGroupId} (decision 16)", () => {
  const GROUP = testMerchant.endpointGroupId

  it("a sale at /api/v2/sale/group/2001 is served, its control (C6) over the group id", async () => {
    const fields = requests.sale()
    const reply = await signedRequest(sim, "SALE", fields, { endpointId: GROUP, group: true })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ type: "async-response", "merchant-order-id": fields.client_orderid })
    await sim.clock.advance(0)
    const status = await signedRequest(sim, "STATUS", { login: testMerchant.login, client_orderid: fields.client_orderid, orderid: String(reply.body["paynet-order-id"]) }, { endpointId: GROUP, group: true })
    expect(status.body).toMatchObject({ status: "approved" })
  })

  it("CREATE_RP_V4 (OAuth RSA-SHA256) signed over the group URL as requested", async () => {
    const op = "CREATE_RP_V4"
    const reply = await signedRequest(sim, op, requests.createRecurringPayment(), { endpointId: GROUP, group: true })
    expect(reply.status).toBe(200)
    // The same signature over the interface's URL form does not verify for the group URL.
    const moved = await signedRequest(sim, op, requests.createRecurringPayment(), {
      endpointId: GROUP,
      mutate: (init) => { init.url = init.url.replace(`/${GROUP}`, `/group/${GROUP}`) }
    })
    expectError(moved, "oauth-bad-signature")
  })

  it("PAYOUT (OAuth HMAC-SHA1) at the group form", async () => {
    const reply = await signedRequest(sim, "PAYOUT", requests.payout(), { endpointId: GROUP, group: true })
    expect(reply.status).toBe(200)
  })

  it("an unknown group id is unknown-endpoint; a non-numeric one a 400; a path that is no operation a 404", async () => {
    expectError(await signedRequest(sim, "SALE", requests.sale(), { endpointId: 9999, group: true }), "unknown-endpoint")
    const bad = await sim.fetch(new Request("http://sim.test/api/v2/sale/group/x", { method: "POST", headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }, body: "" }))
    expect(bad.status).toBe(400)
    const none = await sim.fetch(new Request("http://sim.test/api/v2/nothing/group/2001", { method: "POST", headers: { accept: "application/vnd.pay+json" }, body: "" }))
    expect(none.status).toBe(404)
  })
})

describe("a pending 3DS challenge's status carries html beside redirect-to (decision 12)", () => {
  it("processing with redirect-to and an auto-submitting form to the ACS; neither once the challenge ends", async () => {
    const fields = requests.sale({ credit_card_number: "4000000000003220" })
    const reply = await signedRequest(sim, "SALE", fields)
    const orderid = String(reply.body["paynet-order-id"])
    const acs = String(reply.body["redirect-url"])
    const pending = await statusOf(sim, orderid, fields.client_orderid)
    expect(pending).toMatchObject({ status: "processing", "redirect-to": acs })
    const html = String(pending["html"])
    const form = /<form id="threeds-redirect" method="get" action="([^"]+)">/.exec(html)
    expect(form?.[1]).toBe(acs)
    expect(html).toContain('<script>document.getElementById("threeds-redirect").submit()</script>')
    // Following the form (a GET of its action) shows the challenge page.
    const page = await sim.fetch(new Request(form![1]!))
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('id="pass"')
    await sim.fetch(new Request(acs, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "result=pass" }))
    const done = await statusOf(sim, orderid, fields.client_orderid)
    expect(done.status).toBe("approved")
    expect(done).not.toHaveProperty("html")
    expect(done).not.toHaveProperty("redirect-to")
  })

  it("a card without 3DS never has html in its status", async () => {
    const fields = requests.sale()
    const orderid = String((await signedRequest(sim, "SALE", fields)).body["paynet-order-id"])
    expect(await statusOf(sim, orderid, fields.client_orderid)).not.toHaveProperty("html")
  })
})
