import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

// Recurring process and update (docs/decisions.md#13-recurring-payments; docs/decisions.md#d13p-process-a-recurring-payment, docs/decisions.md#d13u-update-a-recurring-payment).
let sim: Simulator
let receiver: ReturnType<typeof callbackReceiver>
beforeEach(() => {
  receiver = callbackReceiver()
  sim = createSimulator({ callbackFetch: receiver.fetch, startTime: Date.UTC(2030, 0, 15, 12) })
})
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const DAY = 24 * 3600_000
const CALLBACK = "https://merchant.example/cb"

/** A recurring payment; without a schedule unless overrides give period and interval. */
async function subscription(overrides: Record<string, string | undefined> = {}): Promise<string> {
  const reply = await signedRequest(sim, "CREATE_RP_V4", requests.createRecurringPayment({ period: undefined, interval: undefined, server_callback_url: CALLBACK, ...overrides }))
  expect(reply.status).toBe(200)
  return String(reply.body["recurring-payment-id"])
}

const rebills = () => sim.orders().filter((o) => o.kind === "rebill")

describe("process-recurring-payment", () => {
  it("charges a subscription without a schedule now: a rebill through the ledger, its status and callback", async () => {
    const rp = await subscription()
    expect(rebills()).toHaveLength(0)
    const fields = requests.processRecurringPayment({ "recurring-payment-id": rp })
    const reply = await signedRequest(sim, "PROCESS_RP_V4", fields)
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ type: "process-recurring-payment-response", status: "processing", "merchant-order-id": fields["client-orderid"], "recurring-payment-id": rp })
    const orderid = String(reply.body["paynet-order-id"])
    await sim.clock.advance(2000)
    const order = sim.order(orderid)!
    expect(order).toMatchObject({ kind: "rebill", status: "approved", amount: "9.99", currency: "USD", recurringPaymentId: rp, client_orderid: fields["client-orderid"] })
    expect(order.captured).toBe("9.99")
    const status = await statusOf(sim, orderid, fields["client-orderid"]!)
    expect(status).toMatchObject({ status: "approved", "transaction-type": "rebill", "recurring-payment-id": rp, amount: "9.99" })
    expect(receiver.received.filter((c) => c["orderid"] === orderid)).toEqual([expect.objectContaining({ type: "rebill", status: "approved", amount: "9.99" })])
  })

  it("an amount in the profile's currency overrides the profile's; a bad amount is refused before any charge", async () => {
    const rp = await subscription({ currency: "JPY", amount: "1000" })
    const reply = await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp, amount: "1500" }))
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))).toMatchObject({ amount: "1500", currency: "JPY", status: "approved" })
    expectError(await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp, amount: "10.5" })), "invalid-amount")
    expectError(await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp, amount: "0" })), "invalid-amount")
    expect(rebills()).toHaveLength(1)
  })

  it("the same request again is the same charge; the same client-orderid with another amount is a conflict", async () => {
    const rp = await subscription()
    const fields = requests.processRecurringPayment({ "recurring-payment-id": rp })
    const first = await signedRequest(sim, "PROCESS_RP_V4", fields)
    await sim.clock.advance(2000)
    const again = await signedRequest(sim, "PROCESS_RP_V4", fields)
    expect(again.body).toMatchObject({ type: "process-recurring-payment-response", status: "approved", "paynet-order-id": first.body["paynet-order-id"] })
    expect(rebills()).toHaveLength(1)
    expectError(await signedRequest(sim, "PROCESS_RP_V4", { ...fields, amount: "1.00" }), "client-orderid-conflict")
  })

  it("follows the saved card: a declining card's charge is declined and its money released", async () => {
    const rp = await subscription({ "credit-card-number": "4000000000000002" })
    const reply = await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp }))
    await sim.clock.advance(2000)
    const order = sim.order(String(reply.body["paynet-order-id"]))!
    expect(order).toMatchObject({ status: "declined", captured: "0.00", inFlight: "0.00" })
  })

  it("unknown recurring-payment-id → recurring-payment-not-found; also over the group path form", async () => {
    expectError(await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": "RP00000999deadbeef" })), "recurring-payment-not-found")
    const rp = await subscription()
    const grouped = await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp }), { group: true, endpointId: testMerchant.endpointGroupId })
    expect(grouped.body).toMatchObject({ type: "process-recurring-payment-response", status: "processing" })
  })
})

describe("update-recurring-payment", () => {
  it("a new amount applies to the next scheduled charge", async () => {
    const rp = await subscription({ period: "day", interval: "1" })
    await sim.clock.advance(DAY + 1000) // Jan 16: first charge at 9.99
    const reply = await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: "19.99" }))
    expect(reply.body).toMatchObject({ type: "update-recurring-payment-response", status: "approved", "recurring-payment-id": rp })
    await sim.clock.advance(DAY) // Jan 17
    expect(rebills().map((o) => o.amount)).toEqual(["9.99", "19.99"])
  })

  it("a schedule on a subscription created without one, then a new schedule replaces it", async () => {
    const rp = await subscription()
    await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: undefined, period: "week", interval: "1" }))
    await sim.clock.advance(7 * DAY + 1000) // Jan 22: first weekly charge
    expect(rebills()).toHaveLength(1)
    // Daily from Jan 25 instead of weekly (the Jan 29 weekly charge must not come on top).
    await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: undefined, period: "day", interval: "1", "start-date": "2030-01-25" }))
    await sim.clock.advance(9 * DAY) // through Jan 31 noon: Jan 25..31 → 7 daily charges
    expect(rebills()).toHaveLength(8)
  })

  it("a new card: later charges use it (a declining card replaced by an approving one)", async () => {
    const rp = await subscription({ "credit-card-number": "4000000000000002" })
    const card = { "credit-card-number": "5555555555554444", "card-printed-name": "NEW HOLDER", "expire-month": "01", "expire-year": "31" }
    await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: undefined, ...card }))
    const reply = await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp }))
    await sim.clock.advance(2000)
    const status = await statusOf(sim, String(reply.body["paynet-order-id"]), String(reply.body["merchant-order-id"]))
    expect(status).toMatchObject({ status: "approved", bin: "555555", "last-four-digits": "4444", "card-exp-year": "2031", "cardholder-name": "NEW HOLDER" })
  })

  it("a finish-date in the past stops it (process refused, no scheduled charges); a later one re-activates it", async () => {
    const rp = await subscription({ period: "day", interval: "1" })
    await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: undefined, "finish-date": "2030-01-14" }))
    await sim.clock.advance(3 * DAY)
    expect(rebills()).toHaveLength(0)
    expectError(await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp })), "recurring-payment-inactive")
    await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: undefined, "finish-date": "2030-12-31" }))
    expect((await signedRequest(sim, "PROCESS_RP_V4", requests.processRecurringPayment({ "recurring-payment-id": rp }))).status).toBe(200)
    await sim.clock.advance(DAY + 1000)
    expect(rebills()).toHaveLength(2) // the processed one and the first re-activated daily charge
  })

  it("refuses bad fields with a typed error naming the field, and changes nothing", async () => {
    const rp = await subscription({ period: "day", interval: "1" })
    const update = (overrides: Record<string, string | undefined>) => signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, ...overrides }))
    const partialCard = await update({ amount: "50.00", "credit-card-number": "5555555555554444" })
    expectError(partialCard, "invalid-field")
    expect(partialCard.body["error-message"]).toMatch(/^card-printed-name: /)
    expect(partialCard.body["error-message"]).not.toContain("5555555555554444")
    expect((await update({ period: "day" })).body["error-message"]).toMatch(/^period: /)
    expect((await update({ amount: undefined, "start-date": "2030-02-01" })).body["error-message"]).toMatch(/^start-date: /)
    const nothing = await update({ amount: undefined })
    expectError(nothing, "invalid-field")
    expect(nothing.body["error-message"]).toMatch(/^amount: nothing to update/)
    expectError(await update({ amount: "1.001" }), "invalid-amount")
    expectError(await update({ "credit-card-number": "4111111111111112", "card-printed-name": "X", "expire-month": "01", "expire-year": "31" }), "invalid-card-number")
    expectError(await update({ "recurring-payment-id": "RP00000999deadbeef" }), "recurring-payment-not-found")
    // Nothing of the refused updates was applied: the next charge is the original amount.
    await sim.clock.advance(DAY + 1000)
    expect(rebills().map((o) => o.amount)).toEqual(["9.99"])
  })

  it("survives a snapshot: the replaced schedule stays replaced after restore", async () => {
    const rp = await subscription({ period: "day", interval: "1" })
    await signedRequest(sim, "UPDATE_RP_V4", requests.updateRecurringPayment({ "recurring-payment-id": rp, amount: undefined, period: "week", interval: "1" }))
    const restored = createSimulator({ callbackFetch: receiver.fetch, restore: sim.snapshot() })
    try {
      await restored.clock.advance(6 * DAY) // the old daily job is stale: no charge before the weekly one
      expect(restored.orders().filter((o) => o.kind === "rebill")).toHaveLength(0)
      await restored.clock.advance(DAY + 1000)
      expect(restored.orders().filter((o) => o.kind === "rebill")).toHaveLength(1)
    } finally {
      await restored.close()
    }
  })
})
