/**
 * Regression tests of issue #11: each reproduced case, through the simulator's fetch interface,
 * with the test merchant (endpoint 1001) and a processing delay, judged by docs/decisions.md#10-an-orders-lifecycle-is-one-ledger.
 * After every test, no ledger invariant may have been broken at any point.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type OrderView, type Simulator } from "../src/index"
import { engineOf } from "../src/simulator/create"
import { expectError, signedRequest, statusOf } from "./helpers"

const DELAY = 2000
let sim: Simulator
beforeEach(() => {
  sim = createSimulator({ processingDelayMs: DELAY })
})
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const login = testMerchant.login
const usd = (amount: string) => ({ amount, currency: "USD" })

/** The order as GET /__sim/orders/{orderid} shows it. */
async function simOrder(orderid: string): Promise<OrderView> {
  const response = await sim.fetch(new Request(`http://sim.test/__sim/orders/${orderid}`))
  expect(response.status).toBe(200)
  return (await response.json()) as OrderView
}

async function approved(op: "SALE" | "PREAUTH", amount: string, overrides: Record<string, string> = {}) {
  const fields = op === "SALE" ? requests.sale({ amount, ...overrides }) : requests.preauth({ amount, ...overrides })
  const reply = await signedRequest(sim, op, fields)
  expect(reply.status).toBe(200)
  await sim.clock.advance(DELAY)
  const ids = { login, orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
  return ids
}

describe("issue #11 cases (decision 10)", () => {
  it("preauth 100, capture 30 processing, return without amount → return-capture-in-flight; never returns more than is captured", async () => {
    const ids = await approved("PREAUTH", "100.00")
    expect((await signedRequest(sim, "CAPTURE", { ...ids, ...usd("30.00") })).status).toBe(200)
    expect(await simOrder(ids.orderid)).toMatchObject({ authorized: "100.00", captured: "0.00", inFlight: "30.00" })
    expectError(await signedRequest(sim, "RETURN", ids), "return-capture-in-flight")
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ captured: "30.00", returned: "0.00", inFlight: "0.00" })
    expect((await signedRequest(sim, "RETURN", ids)).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ authorized: "100.00", captured: "30.00", returned: "30.00", holdReleased: "0.00", inFlight: "0.00" })
    expect(await statusOf(sim, ids.orderid, ids.client_orderid)).toMatchObject({ "captured-amount": "30.00", "returned-amount": "30.00" })
  })

  it("a return with nothing captured and no capture processing is refused when over the hold", async () => {
    const ids = await approved("PREAUTH", "100.00")
    expectError(await signedRequest(sim, "RETURN", { ...ids, ...usd("100.01") }), "return-exceeds-charged")
  })

  it("preauth 100, capture 50 processing, void → void-in-flight; once the capture is final the void reverses all of it", async () => {
    const ids = await approved("PREAUTH", "100.00")
    expect((await signedRequest(sim, "CAPTURE", { ...ids, ...usd("50.00") })).status).toBe(200)
    expectError(await signedRequest(sim, "VOID", ids), "void-in-flight")
    await sim.clock.advance(DELAY)
    expect((await signedRequest(sim, "VOID", ids)).status).toBe(200)
    expect(await simOrder(ids.orderid)).toMatchObject({ inFlight: "100.00" })
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ authorized: "100.00", captured: "50.00", voided: "50.00", holdReleased: "50.00", returned: "0.00", inFlight: "0.00" })
    expectError(await signedRequest(sim, "RETURN", ids), "return-not-allowed")
    expectError(await signedRequest(sim, "CAPTURE", ids), "capture-not-allowed")
  })

  it("a sale with a return processing: void → void-in-flight", async () => {
    const ids = await approved("SALE", "40.00")
    expect((await signedRequest(sim, "RETURN", { ...ids, ...usd("10.00") })).status).toBe(200)
    expectError(await signedRequest(sim, "VOID", ids), "void-in-flight")
    await sim.clock.advance(DELAY)
    // Partly refunded: a void would be partial.
    expectError(await signedRequest(sim, "VOID", ids), "void-not-allowed")
  })

  it("preauth 100, return 30 releases part of the hold; the other 70 stays capturable", async () => {
    const ids = await approved("PREAUTH", "100.00")
    expect((await signedRequest(sim, "RETURN", { ...ids, ...usd("30.00") })).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ authorized: "100.00", holdReleased: "30.00", returned: "0.00", captured: "0.00" })
    expect(await statusOf(sim, ids.orderid, ids.client_orderid)).toMatchObject({ "captured-amount": "0.00", "returned-amount": "0.00", "hold-released-amount": "30.00" })
    expectError(await signedRequest(sim, "CAPTURE", { ...ids, ...usd("70.01") }), "capture-exceeds-authorized")
    expect((await signedRequest(sim, "CAPTURE", ids)).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ captured: "70.00", holdReleased: "30.00" })
  })

  it("preauth 100, return 30 → the other 70 stays voidable (whole open amount or none)", async () => {
    const ids = await approved("PREAUTH", "100.00")
    await signedRequest(sim, "RETURN", { ...ids, ...usd("30.00") })
    await sim.clock.advance(DELAY)
    expectError(await signedRequest(sim, "VOID", { ...ids, ...usd("100.00") }), "void-partial-not-allowed")
    expect((await signedRequest(sim, "VOID", { ...ids, ...usd("70.00") })).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ holdReleased: "100.00", captured: "0.00", inFlight: "0.00" })
  })

  it("void with amount=10.00&currency=USD on a 10.00 sale is accepted; any other amount → void-partial-not-allowed", async () => {
    const ids = await approved("SALE", "10.00")
    expectError(await signedRequest(sim, "VOID", { ...ids, ...usd("9.99") }), "void-partial-not-allowed")
    expectError(await signedRequest(sim, "VOID", { ...ids, ...usd("10.01") }), "void-partial-not-allowed")
    expect((await signedRequest(sim, "VOID", { ...ids, ...usd("10.00") })).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await simOrder(ids.orderid)).toMatchObject({ captured: "10.00", voided: "10.00", inFlight: "0.00" })
  })

  it("payout-check to the declining card 4000000000000002 → declined; payout-pay → payout-check-declined; no money moved", async () => {
    const fields = requests.payoutCheck({ credit_card_number: "4000000000000002" })
    const check = await signedRequest(sim, "PAYOUT_V4_CHECK", fields)
    expect(check.body).toMatchObject({ status: "declined", "error-code": "05" })
    const ids = { orderid: String(check.body["paynet-order-id"]), client_orderid: fields.client_orderid }
    expectError(await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(ids)), "payout-check-declined")
    expect(await simOrder(ids.orderid)).toMatchObject({ status: "declined", paidOut: "0.00", inFlight: "0.00" })
  })

  it("an approved payout-check registers without moving money; the order is processing until payout-pay", async () => {
    const fields = requests.payoutCheck({ amount: "25.00" })
    const check = await signedRequest(sim, "PAYOUT_V4_CHECK", fields)
    expect(check.body.status).toBe("processing")
    const ids = { orderid: String(check.body["paynet-order-id"]), client_orderid: fields.client_orderid }
    await sim.clock.advance(60 * 60 * 1000)
    expect((await statusOf(sim, ids.orderid, ids.client_orderid)).status).toBe("processing")
    expect(await simOrder(ids.orderid)).toMatchObject({ paidOut: "0.00", inFlight: "0.00" })
    expect((await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(ids))).body.status).toBe("processing")
    expect(await simOrder(ids.orderid)).toMatchObject({ inFlight: "25.00" })
    await sim.clock.advance(DELAY)
    expect((await statusOf(sim, ids.orderid, ids.client_orderid)).status).toBe("approved")
    expect(await simOrder(ids.orderid)).toMatchObject({ paidOut: "25.00", inFlight: "0.00" })
  })

  it("an identical sale resent after the order was declined answers declined (the current state), not the first reply", async () => {
    const fields = requests.sale({ credit_card_number: "4000000000000002" })
    const first = await signedRequest(sim, "SALE", fields)
    expect(first.body.status).toBe("processing")
    await sim.clock.advance(DELAY)
    const again = await signedRequest(sim, "SALE", fields)
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ status: "declined", "paynet-order-id": first.body["paynet-order-id"], "error-code": "05" })
    expect(sim.orders()).toHaveLength(1)
  })

  it("a repeated payout-check after payout-pay answers the payout's current state", async () => {
    const fields = requests.payoutCheck()
    const check = await signedRequest(sim, "PAYOUT_V4_CHECK", fields)
    await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay({ orderid: String(check.body["paynet-order-id"]), client_orderid: fields.client_orderid }))
    await sim.clock.advance(DELAY)
    expect((await signedRequest(sim, "PAYOUT_V4_CHECK", fields)).body.status).toBe("approved")
  })

  describe("3DS versions are not mixed", () => {
    async function threeDS() {
      const fields = requests.sale({ credit_card_number: "4000000000003220" })
      const reply = await signedRequest(sim, "SALE", fields)
      return { orderid: String(reply.body["paynet-order-id"]), "client-order-id": fields.client_orderid }
    }

    it("a 3DS 1 PaRes on a 3DS 2 flow (after the method result) → threeds-version-mismatch", async () => {
      const ids = await threeDS()
      expect((await signedRequest(sim, "TDS_UPLOAD_METHOD_URL_RESULT", requests.uploadMethodUrlResult({ ...ids, threeDSCompInd: "Y" }))).status).toBe(200)
      expectError(await signedRequest(sim, "TDS_UPLOAD_PARES_RESULT", requests.uploadParesResult({ ...ids, paRes: "Y" })), "threeds-version-mismatch")
      expect((await signedRequest(sim, "TDS_UPLOAD_CRES_RESULT", requests.uploadCresResult({ ...ids, cRes: "Y" }))).status).toBe(200)
      await sim.clock.advance(DELAY)
      const view = await simOrder(ids.orderid)
      expect(view).toMatchObject({ status: "approved", authorized: view.amount, captured: view.amount, inFlight: "0.00" })
    })

    it("a 3DS 2 upload on a 3DS 1 flow (after a PaRes) → threeds-version-mismatch", async () => {
      const ids = await threeDS()
      expect((await signedRequest(sim, "TDS_UPLOAD_PARES_RESULT", requests.uploadParesResult({ ...ids, paRes: "Y" }))).status).toBe(200)
      expectError(await signedRequest(sim, "TDS_UPLOAD_CRES_RESULT", requests.uploadCresResult({ ...ids, cRes: "Y" })), "threeds-version-mismatch")
      expectError(await signedRequest(sim, "TDS_UPLOAD_METHOD_URL_RESULT", requests.uploadMethodUrlResult({ ...ids, threeDSCompInd: "Y" })), "threeds-version-mismatch")
    })
  })
})

describe("the ledger in the views and the invariant checker", () => {
  it("GET /__sim/orders/{orderid} and sim.order() show authorized, captured, returned, holdReleased and inFlight as major-unit strings", async () => {
    const fields = requests.preauth({ amount: "1500", currency: "JPY" })
    const reply = await signedRequest(sim, "PREAUTH", fields)
    const orderid = String(reply.body["paynet-order-id"])
    expect(sim.order(orderid)).toMatchObject({ authorized: "0", captured: "0", returned: "0", holdReleased: "0", inFlight: "1500" })
    await sim.clock.advance(DELAY)
    const view = await simOrder(orderid)
    expect(view).toMatchObject({ authorized: "1500", inFlight: "0" })
    expect(view).toEqual(sim.order(orderid))
    expect(view.transactions.map((t) => `${t.type}:${t.status}:${t.amount}`)).toEqual(["preauth:approved:1500"])
  })

  it("GET /__sim/invariants answers [] when the money adds up", async () => {
    await approved("SALE", "5.00")
    const response = await sim.fetch(new Request("http://sim.test/__sim/invariants"))
    expect(await response.json()).toEqual([])
  })

  it("a broken ledger is reported, and a change on it is refused as internal-error and recorded (never applied)", async () => {
    const ids = await approved("PREAUTH", "100.00")
    const order = engineOf(sim)!.store.get(ids.orderid)!
    const healthy = order.ledger
    // Corrupt the ledger by hand: a capture of more than was authorised.
    order.ledger = { ...healthy, entries: [...healthy.entries, { tx: 9, op: "capture", amount: 20000n, moves: { captured: 20000n }, state: "committed" }] }
    expect(sim.checkInvariants().map((v) => [v.orderid, v.invariant, v.during])).toContainEqual([ids.orderid, "captures-within-authorized", "check"])
    const capture = await signedRequest(sim, "CAPTURE", { ...ids, ...usd("1.00") })
    expect(capture.status).toBe(400)
    // A refund with nothing captured: the rules would accept a capture, the invariants then refuse it.
    order.ledger = { ...healthy, entries: [...healthy.entries, { tx: 9, op: "refund", amount: 5000n, moves: { returned: 5000n }, state: "committed" }] }
    const refused = await signedRequest(sim, "CAPTURE", { ...ids, ...usd("1.00") })
    expect({ status: refused.status, code: refused.body["error-code"] }).toEqual({ status: 500, code: "internal-error" })
    expect(sim.checkInvariants().some((v) => v.during === "accept capture" && v.invariant === "refunds-within-captured")).toBe(true)
    expect(order.transactions).toHaveLength(1)
    order.ledger = healthy
    engineOf(sim)!.violations.length = 0
  })
})

describe("snapshots keep the ledger", () => {
  it("a capture in flight at snapshot time stays reserved after restore (void-in-flight), then commits", async () => {
    const ids = await approved("PREAUTH", "100.00")
    await signedRequest(sim, "CAPTURE", { ...ids, ...usd("30.00") })
    const snapshot = JSON.parse(JSON.stringify(sim.snapshot()))
    await sim.close()
    sim = createSimulator({ processingDelayMs: DELAY, restore: snapshot })
    expect(sim.order(ids.orderid)).toMatchObject({ authorized: "100.00", captured: "0.00", inFlight: "30.00" })
    expectError(await signedRequest(sim, "VOID", ids), "void-in-flight")
    await sim.clock.advance(DELAY)
    expect(sim.order(ids.orderid)).toMatchObject({ captured: "30.00", inFlight: "0.00" })
  })
})
