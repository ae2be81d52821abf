import { afterEach, describe, expect, it } from "vitest"
import { CHARGEBACK_DELAY_MS, createSimulator, requests, testCards, testMerchant, type Simulator } from "../src/index"
import { callbackReceiver, signedRequest, statusOf } from "./helpers"

let sim: Simulator
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const CALLBACK = "https://merchant.example/callback"
const DAY = 24 * 60 * 60 * 1000
const CHARGEBACK_CARD = "4000000000001976"

async function chargebackRoute(orderid: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const response = await sim.fetch(new Request(`http://sim.test/__sim/orders/${orderid}/chargeback`, {
    method: "POST",
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  }))
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

async function approvedSale(overrides: Record<string, string | undefined> = {}) {
  const fields = requests.sale({ server_callback_url: CALLBACK, amount: "10.00", ...overrides })
  const orderid = String((await signedRequest(sim, "SALE", fields)).body["paynet-order-id"])
  await sim.clock.advance(2000)
  return { orderid, client_orderid: fields.client_orderid }
}

describe("chargebacks (decision 17)", () => {
  it("the chargeback card is in the test-card table", () => {
    sim = createSimulator()
    expect(testCards).toContainEqual(expect.objectContaining({ number: CHARGEBACK_CARD, outcome: "chargeback" }))
    expect(CHARGEBACK_DELAY_MS).toBe(30 * DAY)
  })

  it("card 4000000000001976 approves, then is charged back 30 simulated days after settlement: ledger, callback, status", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const { orderid, client_orderid } = await approvedSale({ credit_card_number: CHARGEBACK_CARD })
    expect(sim.order(orderid)).toMatchObject({ status: "approved", chargedBack: "0.00" })
    await sim.clock.advance(DAY) // settles
    await sim.clock.advance(CHARGEBACK_DELAY_MS - 1)
    expect(receiver.received.map((r) => r["type"])).toEqual(["sale"])
    await sim.clock.advance(1)
    expect(receiver.received.map((r) => [r["type"], r["status"], r["amount"]])).toEqual([["sale", "approved", "10.00"], ["chargeback", "approved", "10.00"]])
    expect(receiver.received[1]!["processor-rrn"]).not.toBe(receiver.received[0]!["processor-rrn"])
    expect(sim.order(orderid)).toMatchObject({ captured: "10.00", chargedBack: "10.00", returned: "0.00" })
    expect(sim.order(orderid)!.transactions.map((t) => [t.type, t.status])).toEqual([["sale", "approved"], ["chargeback", "approved"]])
    expect(await statusOf(sim, orderid, client_orderid)).toMatchObject({ status: "approved", "transaction-type": "chargeback", "chargeback-amount": "10.00" })
    // Once: later settlements or time bring no second chargeback.
    await sim.clock.advance(60 * DAY)
    expect(receiver.received).toHaveLength(2)
  })

  it("an approving card is never charged back by itself", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const { orderid, client_orderid } = await approvedSale()
    await sim.clock.advance(DAY + CHARGEBACK_DELAY_MS + DAY)
    expect(receiver.received.map((r) => r["type"])).toEqual(["sale"])
    expect(sim.order(orderid)).toMatchObject({ chargedBack: "0.00" })
    expect(await statusOf(sim, orderid, client_orderid)).not.toHaveProperty("chargeback-amount")
  })

  it("the chargeback card's order refunded in full before the 30 days is not charged back", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const { orderid, client_orderid } = await approvedSale({ credit_card_number: CHARGEBACK_CARD })
    await sim.clock.advance(DAY)
    await signedRequest(sim, "RETURN", { login: testMerchant.login, client_orderid, orderid })
    await sim.clock.advance(CHARGEBACK_DELAY_MS)
    expect(receiver.received.map((r) => r["type"])).toEqual(["sale", "reversal"])
    expect(sim.order(orderid)).toMatchObject({ returned: "10.00", chargedBack: "0.00" })
  })

  it("a preauth on the chargeback card is charged back 30 days after its capture settles, for what was captured", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch, processingDelayMs: 0 })
    const fields = requests.preauth({ server_callback_url: CALLBACK, amount: "10.00", credit_card_number: CHARGEBACK_CARD })
    const orderid = String((await signedRequest(sim, "PREAUTH", fields)).body["paynet-order-id"])
    await sim.clock.advance(0)
    await signedRequest(sim, "CAPTURE", { login: testMerchant.login, client_orderid: fields.client_orderid, orderid, amount: "6.00", currency: "USD" })
    await sim.clock.advance(DAY + CHARGEBACK_DELAY_MS)
    expect(receiver.received.map((r) => [r["type"], r["amount"]])).toEqual([["preauth", "10.00"], ["capture", "6.00"], ["chargeback", "6.00"]])
    expect(sim.order(orderid)).toMatchObject({ captured: "6.00", chargedBack: "6.00" })
  })

  it("a pending chargeback survives a snapshot and restore", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const { orderid } = await approvedSale({ credit_card_number: CHARGEBACK_CARD })
    await sim.clock.advance(DAY)
    const snapshot = JSON.parse(JSON.stringify(sim.snapshot()))
    expect(snapshot.pendingJobs).toContainEqual(expect.objectContaining({ kind: "chargeback", orderid }))
    await sim.close()
    sim = createSimulator({ restore: snapshot, callbackFetch: receiver.fetch })
    await sim.clock.advance(CHARGEBACK_DELAY_MS)
    expect(receiver.received.map((r) => r["type"])).toEqual(["sale", "chargeback"])
    expect(sim.order(orderid)).toMatchObject({ chargedBack: "10.00" })
  })
})

describe("POST /__sim/orders/{orderid}/chargeback", () => {
  it("charges back a settled order now, in part or whole, with a callback each; then nothing is left", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const { orderid, client_orderid } = await approvedSale()
    await sim.clock.advance(DAY)
    const part = await chargebackRoute(orderid, { amount: "4.00" })
    expect(part.status).toBe(200)
    expect(part.body).toMatchObject({ orderid, amount: "4.00", currency: "USD", order: { chargedBack: "4.00", captured: "10.00" } })
    await sim.clock.advance(0)
    expect(await statusOf(sim, orderid, client_orderid)).toMatchObject({ "transaction-type": "chargeback", "chargeback-amount": "4.00", "returned-amount": "0.00" })
    const rest = await chargebackRoute(orderid)
    expect(rest).toMatchObject({ status: 200, body: { amount: "6.00", order: { chargedBack: "10.00" } } })
    await sim.clock.advance(0)
    expect(receiver.received.map((r) => [r["type"], r["amount"]])).toEqual([["sale", "10.00"], ["chargeback", "4.00"], ["chargeback", "6.00"]])
    expect(await chargebackRoute(orderid)).toMatchObject({ status: 409, body: { code: "chargeback-not-allowed", reason: "fully-refunded" } })
    // A return after a full chargeback has nothing left either.
    const ret = await signedRequest(sim, "RETURN", { login: testMerchant.login, client_orderid, orderid, amount: "1.00", currency: "USD" })
    expect(ret.body["error-code"]).toBe("return-exceeds-charged")
  })

  it("refuses an unsettled, voided or fully refunded order, naming why", async () => {
    sim = createSimulator({ callbackFetch: callbackReceiver().fetch })
    const unsettled = await approvedSale()
    const r1 = await chargebackRoute(unsettled.orderid)
    expect(r1).toMatchObject({ status: 409, body: { code: "chargeback-not-allowed", reason: "not-settled" } })
    expect(r1.body.error).toMatch(/not settled/)

    const voided = await approvedSale()
    await signedRequest(sim, "VOID", { login: testMerchant.login, client_orderid: voided.client_orderid, orderid: voided.orderid })
    await sim.clock.advance(DAY + 2000)
    const r2 = await chargebackRoute(voided.orderid)
    expect(r2).toMatchObject({ status: 409, body: { code: "chargeback-not-allowed", reason: "voided" } })
    expect(r2.body.error).toMatch(/voided/)

    const refunded = await approvedSale()
    await sim.clock.advance(DAY)
    await signedRequest(sim, "RETURN", { login: testMerchant.login, client_orderid: refunded.client_orderid, orderid: refunded.orderid })
    await sim.clock.advance(2000)
    const r3 = await chargebackRoute(refunded.orderid)
    expect(r3).toMatchObject({ status: 409, body: { code: "chargeback-not-allowed", reason: "fully-refunded" } })
    expect(r3.body.error).toMatch(/fully refunded/)
    expect(sim.order(refunded.orderid)).toMatchObject({ chargedBack: "0.00" })
  })

  it("refuses a declined order, an unknown order, a bad amount and an amount beyond what is left", async () => {
    sim = createSimulator({ callbackFetch: callbackReceiver().fetch })
    const declined = await approvedSale({ credit_card_number: "4000000000000002" })
    await sim.clock.advance(DAY)
    expect(await chargebackRoute(declined.orderid)).toMatchObject({ status: 409, body: { reason: "not-approved" } })
    expect(await chargebackRoute("999999")).toMatchObject({ status: 404, body: { code: "order-not-found" } })
    const sale = await approvedSale()
    await sim.clock.advance(DAY)
    expect(await chargebackRoute(sale.orderid, { amount: "1.005" })).toMatchObject({ status: 400, body: { code: "invalid-amount" } })
    expect(await chargebackRoute(sale.orderid, { amount: 5 })).toMatchObject({ status: 400, body: { code: "invalid-amount" } })
    expect(await chargebackRoute(sale.orderid, "not json")).toMatchObject({ status: 400, body: { code: "invalid-field" } })
    const tooMuch = await chargebackRoute(sale.orderid, { amount: "10.01" })
    expect(tooMuch).toMatchObject({ status: 400, body: { code: "chargeback-not-allowed", reason: "exceeds-refundable" } })
    expect(tooMuch.body.error).toMatch(/at most 10\.00 USD/)
    expect(sim.order(sale.orderid)).toMatchObject({ chargedBack: "0.00" })
  })
})
