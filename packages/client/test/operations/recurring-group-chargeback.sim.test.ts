import { createPayClient, type Final, type TransactionType } from "../../src/index"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { coid, saleInput } from "../support/fixtures"
import { BASE_URL, clientOptions, setup } from "../support/sim"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// Callbacks are answered in process: none may leave for the network.
const { sim, pay } = setup({ callbackFetch: async () => new Response("ok") })
afterAll(() => sim.close())
const DAY = 24 * 3600_000

const subscription = (overrides: Record<string, string> = {}) => pay.createRecurringPayment({
  "client-orderid": coid("rp"), order_desc: "plan", amount: "9.99", currency: "USD", "credit-card-number": "4111111111111111",
  "card-printed-name": "JOHN DOE", "expire-month": "12", "expire-year": "30", country: "US", city: "Springfield", "zip-code": "12345",
  address1: "1 Main St", "customer-ip": "127.0.0.1", server_callback_url: "https://shop.example.com/cb", ...overrides
})

/** Records every URL the client sends to, then hands the request to the simulator. */
function recordingFetch() {
  const urls: Array<string> = []
  const fetch = (request: Request) => {
    urls.push(request.url)
    return sim.fetch(request)
  }
  return { urls, fetch }
}

// docs/decisions.md#13-recurring-payments (docs/decisions.md#d13p-process-a-recurring-payment, docs/decisions.md#d13u-update-a-recurring-payment): process and update end to end through the client.
describe("processRecurringPayment and updateRecurringPayment", () => {
  it("a subscription without a schedule is charged by process, then updated, then charged at the new amount", async () => {
    const created = await subscription()
    if (created.type === "reconciled") throw new Error("no fault injected, expected a direct reply")
    const rp = created["recurring-payment-id"]
    const charge = { "client-orderid": coid("charge"), "recurring-payment-id": rp }
    const ack = await pay.processRecurringPayment(charge)
    if (ack.type === "reconciled") throw new Error("no fault injected, expected a direct reply")
    expect(ack).toMatchObject({ type: "process-recurring-payment-response", status: "processing", "merchant-order-id": charge["client-orderid"], "recurring-payment-id": rp, idempotencyKey: expect.any(String) })
    const final = await pay.awaitFinal({ client_orderid: charge["client-orderid"], orderid: ack["paynet-order-id"] })
    expect(final).toMatchObject({ _tag: "Final", status: "approved", outcome: "approved", "transaction-type": "rebill", amount: "9.99", "recurring-payment-id": rp })

    const updated = await pay.updateRecurringPayment({ "client-orderid": coid("upd"), "recurring-payment-id": rp, amount: "14.50" })
    expect(updated).toMatchObject({ type: "update-recurring-payment-response", status: "approved", "recurring-payment-id": rp })
    expect("idempotencyKey" in updated).toBe(false) // a read-class call: resend-safe, no intent
    const second = { "client-orderid": coid("charge"), "recurring-payment-id": rp }
    await pay.processRecurringPayment(second)
    expect(await pay.awaitFinal({ client_orderid: second["client-orderid"] })).toMatchObject({ status: "approved", amount: "14.50" })
  })

  it("refusals are typed: unknown id, half a card, a stopped profile", async () => {
    await expect(pay.processRecurringPayment({ "client-orderid": coid("charge"), "recurring-payment-id": "RP00000999deadbeef" }))
      .rejects.toMatchObject({ _tag: "GatewayValidationError", errorCode: "recurring-payment-not-found", category: "lifecycle" })
    const created = await subscription()
    const rp = created.type === "reconciled" ? "" : created["recurring-payment-id"]
    await expect(pay.updateRecurringPayment({ "client-orderid": coid("upd"), "recurring-payment-id": rp, "credit-card-number": "5555555555554444" }))
      .rejects.toMatchObject({ _tag: "GatewayValidationError", errorCode: "invalid-field" })
    await expect(pay.updateRecurringPayment({ "client-orderid": coid("upd"), "recurring-payment-id": rp, period: "year" as never, interval: "1" }))
      .rejects.toMatchObject({ _tag: "InputError", field: "period" })
    await pay.updateRecurringPayment({ "client-orderid": coid("upd"), "recurring-payment-id": rp, "finish-date": "2000-01-01" })
    await expect(pay.processRecurringPayment({ "client-orderid": coid("charge"), "recurring-payment-id": rp }))
      .rejects.toMatchObject({ _tag: "GatewayValidationError", errorCode: "recurring-payment-inactive" })
  })

  it("a process whose reply is lost is proven from status by client-orderid, never charged twice", async () => {
    const created = await subscription()
    const rp = created.type === "reconciled" ? "" : created["recurring-payment-id"]
    sim.faults.add({ operation: "PROCESS_RP_V4", kind: "reset-after", count: 1 })
    const charge = { "client-orderid": coid("charge"), "recurring-payment-id": rp }
    const result = await pay.processRecurringPayment(charge)
    sim.faults.clear()
    expect(result).toMatchObject({ type: "reconciled", "merchant-order-id": charge["client-orderid"] })
    expect(sim.orders().filter((o) => o.client_orderid === charge["client-orderid"])).toHaveLength(1)
  })
})

// docs/decisions.md#16-endpoint-groups: the interface's /{endpointId} form unless told; the gateway's group path on request.
describe("endpoint-group path form", () => {
  it("default: a group call puts the group id in {endpointId}; group-path config sends /group/{id}", async () => {
    const rec = recordingFetch()
    const plain = createPayClient(clientOptions(sim, { fetch: rec.fetch }))
    const a = saleInput()
    await plain.sale(a, { endpoint: "group" })
    await plain.status({ client_orderid: a.client_orderid })
    expect(rec.urls).toEqual([`${BASE_URL}/api/v2/sale/2001`, `${BASE_URL}/api/v2/status/1001`])

    const grouped = createPayClient(clientOptions(sim, { fetch: rec.fetch, groupPathForm: "group-path" }))
    const b = saleInput()
    const ack = await grouped.sale(b, { endpoint: "group" }) // C6 signs the group id
    expect(ack.type).toBe("async-response")
    const created = await (grouped.createRecurringPayment as typeof pay.createRecurringPayment)({
      "client-orderid": coid("rp"), order_desc: "plan", amount: "9.99", currency: "USD", "credit-card-number": "4111111111111111",
      "card-printed-name": "JOHN DOE", "expire-month": "12", "expire-year": "30", country: "US", city: "Springfield", "zip-code": "12345",
      address1: "1 Main St", "customer-ip": "127.0.0.1"
    }, { endpoint: "group" }) // OAuth RSA over the URL as sent
    expect(created.type).toBe("async-response")
    expect(await grouped.status({ client_orderid: b.client_orderid }, { endpoint: "group" })).toMatchObject({ status: "approved" })
    expect(rec.urls.slice(2)).toEqual([`${BASE_URL}/api/v2/sale/group/2001`, `${BASE_URL}/api/v4/create-recurring-payment/group/2001`, `${BASE_URL}/api/v2/status/group/2001`])
  })

  it("per call: groupPathForm overrides the client's; without an endpointGroupId the group path is an InputError, nothing sent", async () => {
    const rec = recordingFetch()
    const plain = createPayClient(clientOptions(sim, { fetch: rec.fetch }))
    await plain.status({ client_orderid: "none-such" }, { endpoint: "group", groupPathForm: "group-path" }).catch(() => undefined)
    expect(rec.urls).toEqual([`${BASE_URL}/api/v2/status/group/2001`])
    const noGroup = createPayClient(clientOptions(sim, { fetch: rec.fetch, endpointGroupId: undefined, groupPathForm: "group-path" }))
    await expect(noGroup.sale(saleInput(), { endpoint: "group" })).rejects.toMatchObject({ _tag: "InputError", field: "endpointGroupId" })
    expect(rec.urls).toHaveLength(1)
  })
})

// docs/decisions.md#17-chargebacks (docs/decisions.md#d17c-chargebacks-in-status): a chargeback is typed in status and awaitFinal.
describe("chargebacks in status and awaitFinal", () => {
  it("the chargeback test card: 30 days after settlement the order reads charged-back with its amount", async () => {
    const input = saleInput({ credit_card_number: "4000000000001976" })
    await pay.sale(input)
    expect(await pay.awaitFinal({ client_orderid: input.client_orderid })).toMatchObject({ outcome: "approved" })
    await sim.clock.advance(32 * DAY)
    const final: Final = await pay.awaitFinal({ client_orderid: input.client_orderid }) as Final
    const type: TransactionType | undefined = final["transaction-type"]
    expect(type).toBe("chargeback")
    expect(final).toMatchObject({ _tag: "Final", status: "approved", outcome: "charged-back", "chargeback-amount": input.amount })
  })

  it("a partial chargeback by the test route: charged-back, chargeback-amount the part", async () => {
    const input = saleInput()
    const ack = await pay.sale(input)
    await pay.awaitFinal({ client_orderid: input.client_orderid })
    await sim.clock.advance(2 * DAY) // settled
    const response = await sim.fetch(new Request(`${BASE_URL}/__sim/orders/${ack["paynet-order-id"]}/chargeback`, { method: "POST", body: JSON.stringify({ amount: "1.00" }) }))
    expect(response.status).toBe(200)
    const status = await pay.status({ client_orderid: input.client_orderid })
    expect(status).toMatchObject({ "transaction-type": "chargeback", "chargeback-amount": "1.00" })
    expect(await pay.awaitFinal({ client_orderid: input.client_orderid })).toMatchObject({ outcome: "charged-back", "chargeback-amount": "1.00" })
    // A later partial return is the last transaction now; the money's story is still the chargeback.
    await pay.return({ client_orderid: input.client_orderid, orderid: ack["paynet-order-id"]!, amount: "2.00", currency: input.currency })
    const after = await pay.awaitFinal({ client_orderid: input.client_orderid })
    expect(after).toMatchObject({ _tag: "Final", "transaction-type": "return", "chargeback-amount": "1.00", "returned-amount": "2.00", outcome: "charged-back" })
  })
})
