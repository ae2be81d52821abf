import { describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { expectError, signedRequest, statusOf, useCheckedSimulator } from "./helpers"

let sim: Simulator
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
useCheckedSimulator((made) => (sim = made))

const login = testMerchant.login

async function approved(op: "SALE" | "PREAUTH", overrides: Record<string, string> = {}) {
  const fields = op === "SALE" ? requests.sale(overrides) : requests.preauth(overrides)
  const reply = await signedRequest(sim, op, fields)
  expect(reply.status).toBe(200)
  const orderid = String(reply.body["paynet-order-id"])
  await sim.clock.advance(2000)
  return { orderid, client_orderid: fields.client_orderid, fields }
}

describe("sale", () => {
  it("answers processing, then approved after processingDelayMs on the simulator clock", async () => {
    const fields = requests.sale({ amount: "10.42" })
    const reply = await signedRequest(sim, "SALE", fields)
    expect(reply.body).toMatchObject({ type: "async-response", status: "processing", "merchant-order-id": fields.client_orderid, "end-point-id": "1001" })
    expect(reply.body["paynet-order-id"]).toMatch(/^[0-9]+$/)
    expect(reply.body["serial-number"]).toMatch(/^[0-9a-f-]{36}$/)
    const orderid = String(reply.body["paynet-order-id"])
    await sim.clock.advance(1999)
    expect((await statusOf(sim, orderid, fields.client_orderid)).status).toBe("processing")
    await sim.clock.advance(1)
    const status = await statusOf(sim, orderid, fields.client_orderid)
    expect(status).toMatchObject({ type: "status-response", status: "approved", amount: "10.42", currency: "USD", "transaction-type": "sale", bin: "411111", "last-four-digits": "1111", "card-type": "VISA" })
    expect(sim.order(orderid)).toMatchObject({ kind: "sale", status: "approved", amount: "10.42", card: { masked: "411111******1111" } })
  })

  it("accepts the endpoint group id in place of the endpoint id", async () => {
    const reply = await signedRequest(sim, "SALE", requests.sale(), { endpointId: testMerchant.endpointGroupId })
    expect(reply.status).toBe(200)
  })

  it("processingDelayMs 0 makes the order final at the next look", async () => {
    await sim.close()
    sim = createSimulator({ processingDelayMs: 0 })
    const fields = requests.sale()
    const reply = await signedRequest(sim, "SALE", fields)
    expect((await statusOf(sim, String(reply.body["paynet-order-id"]), fields.client_orderid)).status).toBe("approved")
  })

  it("handles JPY (exponent 0) and KWD (exponent 3) amounts exactly in the default cents mode", async () => {
    const jpy = await approved("SALE", { amount: "1500", currency: "JPY" })
    expect(sim.order(jpy.orderid)?.amount).toBe("1500")
    const kwd = await approved("SALE", { amount: "1.230", currency: "KWD" })
    expect(sim.order(kwd.orderid)?.amount).toBe("1.230")
  })

  it("cents mode: a KWD amount with a non-zero third fraction digit is invalid-amount, never rounded", async () => {
    const fields = { ...requests.sale(), amount: "1.234", currency: "KWD" }
    // Signed in iso4217 by a merchant who believes the simulator uses it: the digest cannot be
    // recomputed in cents, and the reply says why instead of a bare control-mismatch.
    const reply = await signedRequest(sim, "SALE", fields, { minorUnits: "iso4217" })
    expect(reply.status).toBe(400)
    expect(reply.body["error-code"]).toBe("invalid-amount")
    expect(String(reply.body["error-message"])).toMatch(/amount/)
  })

  it("iso4217 mode (merchant opt-in): KWD 1.234 is signed and verified with the ISO exponent", async () => {
    const iso = createSimulator({
      processingDelayMs: 0,
      merchants: [{ login: testMerchant.login, controlKey: testMerchant.controlKey, endpointIds: [testMerchant.endpointId], minorUnits: "iso4217" }]
    })
    const fields = { ...requests.sale(), amount: "1.234", currency: "KWD" }
    const reply = await signedRequest(iso, "SALE", fields, { minorUnits: "iso4217" })
    expect(reply.status).toBe(200)
    expect(iso.order(String(reply.body["paynet-order-id"]))?.amount).toBe("1.234")
    const cents = await signedRequest(iso, "SALE", { ...requests.sale(), amount: "1500", currency: "JPY" })
    expect(cents.body["error-code"]).toBe("control-mismatch")
  })
})

describe("client_orderid idempotency", () => {
  it("a repeated identical sale is the same order, never a second charge", async () => {
    const fields = requests.sale()
    const first = await signedRequest(sim, "SALE", fields)
    const second = await signedRequest(sim, "SALE", fields)
    const { "serial-number": _f, ...firstRest } = first.body
    const { "serial-number": _s, ...secondRest } = second.body
    expect(secondRest).toEqual(firstRest)
    expect(sim.orders()).toHaveLength(1)
  })

  it.each([
    ["amount", { amount: "11.00" }],
    ["currency", { currency: "EUR" }],
    ["card", { credit_card_number: "5555555555554444" }]
  ])("a different %s under the same client_orderid is client-orderid-conflict", async (_name, change) => {
    const fields = requests.sale()
    await signedRequest(sim, "SALE", fields)
    expectError(await signedRequest(sim, "SALE", { ...fields, ...change }), "client-orderid-conflict")
    expect(sim.orders()).toHaveLength(1)
  })

  it("the same client_orderid for a different operation is a conflict", async () => {
    const fields = requests.sale()
    await signedRequest(sim, "SALE", fields)
    expectError(await signedRequest(sim, "PREAUTH", fields), "client-orderid-conflict")
  })
})

describe("status", () => {
  it("finds an order by client_orderid alone", async () => {
    const { orderid, client_orderid } = await approved("SALE")
    const reply = await signedRequest(sim, "STATUS", { login, client_orderid })
    expect(reply.body).toMatchObject({ status: "approved", "paynet-order-id": orderid })
  })

  it("unknown orderid or client_orderid → order-not-found", async () => {
    expectError(await signedRequest(sim, "STATUS", { login, client_orderid: "nope", orderid: "999" }), "order-not-found")
    expectError(await signedRequest(sim, "STATUS", { login, client_orderid: "nope" }), "order-not-found")
  })

  it("an orderid with another order's client_orderid → order-not-found", async () => {
    const { orderid } = await approved("SALE")
    expectError(await signedRequest(sim, "STATUS", { login, client_orderid: "other", orderid }), "order-not-found")
  })
})

describe("preauth and capture", () => {
  it("captures partially and repeatedly up to the authorized amount", async () => {
    const { orderid, client_orderid } = await approved("PREAUTH", { amount: "100.00" })
    for (const amount of ["30.00", "50.00"]) {
      const cap = await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid, amount, currency: "USD" })
      expect(cap.body).toMatchObject({ type: "async-response", status: "processing" })
    }
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid, amount: "20.01", currency: "USD" }), "capture-exceeds-authorized")
    await sim.clock.advance(2000)
    const status = await statusOf(sim, orderid, client_orderid)
    expect(status).toMatchObject({ status: "approved", "transaction-type": "capture", "captured-amount": "80.00" })
    const full = await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid })
    expect(full.status).toBe(200)
    await sim.clock.advance(2000)
    expect(sim.order(orderid)?.captured).toBe("100.00")
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid }), "capture-exceeds-authorized")
  })

  it("capture of a sale, or of a preauth still processing → capture-not-allowed", async () => {
    const sale = await approved("SALE")
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid: sale.client_orderid, orderid: sale.orderid }), "capture-not-allowed")
    const fields = requests.preauth()
    const pre = await signedRequest(sim, "PREAUTH", fields)
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid: fields.client_orderid, orderid: String(pre.body["paynet-order-id"]) }), "capture-not-allowed")
  })

  it("capture of a declined preauth → capture-not-allowed", async () => {
    const { orderid, client_orderid } = await approved("PREAUTH", { credit_card_number: "4000000000000002" })
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid }), "capture-not-allowed")
  })

  it("capture in another currency, or amount without currency → currency-mismatch", async () => {
    const { orderid, client_orderid } = await approved("PREAUTH")
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid, amount: "1.00", currency: "EUR" }), "currency-mismatch")
    const amountOnly = await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid }, { mutate: (init) => void (init.fields["amount"] = "1.00") })
    expectError(amountOnly, "currency-mismatch")
  })
})

describe("void", () => {
  it("voids an approved sale before settlement", async () => {
    const { orderid, client_orderid } = await approved("SALE")
    const reply = await signedRequest(sim, "VOID", { login, client_orderid, orderid })
    expect(reply.body.status).toBe("processing")
    await sim.clock.advance(2000)
    expect(await statusOf(sim, orderid, client_orderid)).toMatchObject({ status: "approved", "transaction-type": "void" })
    expectError(await signedRequest(sim, "VOID", { login, client_orderid, orderid }), "void-not-allowed")
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid, orderid }), "return-not-allowed")
  })

  it("voids a preauth's hold; capture is then not allowed", async () => {
    const { orderid, client_orderid } = await approved("PREAUTH")
    expect((await signedRequest(sim, "VOID", { login, client_orderid, orderid })).status).toBe(200)
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid }), "capture-not-allowed")
  })

  it("after settlement (default 24 h on the simulator clock) → void-not-allowed", async () => {
    const { orderid, client_orderid } = await approved("SALE")
    await sim.clock.advance(24 * 60 * 60 * 1000)
    expect(sim.order(orderid)?.settled).toBe(true)
    expectError(await signedRequest(sim, "VOID", { login, client_orderid, orderid }), "void-not-allowed")
  })

  it("settlementDelayMs is configurable", async () => {
    await sim.close()
    sim = createSimulator({ settlementDelayMs: 5000 })
    const { orderid, client_orderid } = await approved("SALE")
    await sim.clock.advance(5000)
    expectError(await signedRequest(sim, "VOID", { login, client_orderid, orderid }), "void-not-allowed")
  })

  it("an amount in a void body other than the whole open amount → void-partial-not-allowed", async () => {
    const { orderid, client_orderid } = await approved("SALE", { amount: "10.00" })
    expectError(await signedRequest(sim, "VOID", { login, client_orderid, orderid, amount: "1.00", currency: "USD" }), "void-partial-not-allowed")
  })

  it("void of a declined sale → void-not-allowed", async () => {
    const { orderid, client_orderid } = await approved("SALE", { credit_card_number: "4000000000000002" })
    expectError(await signedRequest(sim, "VOID", { login, client_orderid, orderid }), "void-not-allowed")
  })
})

describe("return", () => {
  it("partial returns up to what was charged", async () => {
    const { orderid, client_orderid } = await approved("SALE", { amount: "50.00" })
    expect((await signedRequest(sim, "RETURN", { login, client_orderid, orderid, amount: "20.00", currency: "USD" })).status).toBe(200)
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid, orderid, amount: "30.01", currency: "USD" }), "return-exceeds-charged")
    await sim.clock.advance(2000)
    expect(await statusOf(sim, orderid, client_orderid)).toMatchObject({ "transaction-type": "return", "returned-amount": "20.00" })
    expect((await signedRequest(sim, "RETURN", { login, client_orderid, orderid })).status).toBe(200)
    await sim.clock.advance(2000)
    expect(sim.order(orderid)?.returned).toBe("50.00")
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid, orderid }), "return-exceeds-charged")
  })

  it("only on an approved original: processing or declined → return-not-allowed", async () => {
    const fields = requests.sale()
    const reply = await signedRequest(sim, "SALE", fields)
    const orderid = String(reply.body["paynet-order-id"])
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid: fields.client_orderid, orderid }), "return-not-allowed")
    const declined = await approved("SALE", { credit_card_number: "4000000000000002" })
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid: declined.client_orderid, orderid: declined.orderid }), "return-not-allowed")
  })

  it("on a captured preauth, never beyond the captures", async () => {
    const { orderid, client_orderid } = await approved("PREAUTH", { amount: "100.00" })
    await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid, amount: "40.00", currency: "USD" })
    await sim.clock.advance(2000)
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid, orderid, amount: "40.01", currency: "USD" }), "return-exceeds-charged")
    expect((await signedRequest(sim, "RETURN", { login, client_orderid, orderid, amount: "40.00", currency: "USD" })).status).toBe(200)
  })

  it("a return on an uncaptured preauth cancels the hold; capture is then not allowed", async () => {
    const { orderid, client_orderid } = await approved("PREAUTH", { amount: "30.00" })
    expect((await signedRequest(sim, "RETURN", { login, client_orderid, orderid })).status).toBe(200)
    expectError(await signedRequest(sim, "CAPTURE", { login, client_orderid, orderid }), "capture-not-allowed")
  })

  it("in another currency → currency-mismatch", async () => {
    const { orderid, client_orderid } = await approved("SALE")
    expectError(await signedRequest(sim, "RETURN", { login, client_orderid, orderid, amount: "1.00", currency: "EUR" }), "currency-mismatch")
  })
})

describe("account verification", () => {
  it("approves a zero-amount authorization", async () => {
    const fields = requests.accountVerification()
    const reply = await signedRequest(sim, "ACCOUNT_VERIFICATION", fields)
    expect(reply.body.status).toBe("processing")
    await sim.clock.advance(2000)
    const orderid = String(reply.body["paynet-order-id"])
    expect(await statusOf(sim, orderid, fields.client_orderid)).toMatchObject({ status: "approved", amount: "0.00", "transaction-type": "account-verification" })
  })

  it("declines with the decline test card", async () => {
    const fields = requests.accountVerification({ credit_card_number: "4000000000000002" })
    const reply = await signedRequest(sim, "ACCOUNT_VERIFICATION", fields)
    await sim.clock.advance(2000)
    expect((await statusOf(sim, String(reply.body["paynet-order-id"]), fields.client_orderid)).status).toBe("declined")
  })
})
