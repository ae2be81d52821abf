import { callbackControl } from "@paykit/signing"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, type PayClientOptions } from "../../src/index"
import { openMemoryStore } from "../../src/store/index"
import { merchant } from "../support/fixtures"
import { asyncOk, reset, routedFetch, statusOk } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// Two clients (two "instances") sharing one PayStore: keys and callback claims hold across them.
const store = await openMemoryStore()
afterAll(() => store.close())

const preauth = statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "preauth", "captured-amount": "0.00" })
const capture = { client_orderid: "c-1", orderid: "123", amount: "4.00", currency: "USD" }

function instance(routes: Parameters<typeof routedFetch>[0], extra: Partial<PayClientOptions> = {}) {
  const stub = routedFetch(routes)
  const pay = createPayClient({
    baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch, store,
    retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 }, reconcile: { settleMs: 20, pollIntervalMs: 5 }, ...extra
  })
  return { pay, stub }
}

describe("a shared store", () => {
  it("replays a key's success on another instance without sending", async () => {
    const a = instance({ status: [preauth], capture: [asyncOk()] })
    const b = instance({ status: [preauth], capture: [asyncOk()] })
    const first = await a.pay.capture(capture, { idempotencyKey: "fleet-cap-1" })
    const replay = await b.pay.capture(capture, { idempotencyKey: "fleet-cap-1" })
    expect(replay).toMatchObject({ type: "async-response", "paynet-order-id": first["paynet-order-id"], idempotencyKey: "fleet-cap-1" })
    expect(b.stub.count("capture")).toBe(0)
    expect(b.stub.count("status")).toBe(0)
  })

  it("refuses a key used for a different request on another instance", async () => {
    const a = instance({ status: [preauth], capture: [asyncOk()] })
    const b = instance({ status: [preauth], capture: [asyncOk()] })
    await a.pay.capture(capture, { idempotencyKey: "fleet-cap-2" })
    await expect(b.pay.capture({ ...capture, amount: "5.00" }, { idempotencyKey: "fleet-cap-2" })).rejects.toMatchObject({ _tag: "InputError", field: "idempotencyKey" })
    expect(b.stub.count("capture")).toBe(0)
  })

  it("an unknown outcome on one instance is never resent blindly by another (a taken-over intent)", async () => {
    const landed = statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "capture", "captured-amount": "4.00" })
    const crash = async (key: string) => {
      const a = instance({ status: (_f, n) => (n === 0 ? preauth : { status: 500, body: "" }), capture: [reset()] }, { deadlineMs: 300, intentLeaseMs: 40 })
      const e = await a.pay.capture(capture, { idempotencyKey: key }).catch((x: unknown) => x as { _tag: string })
      expect(e).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
      await new Promise((r) => setTimeout(r, 60))
    }
    // Another instance takes the intent over after its lease, with the order as it was before the
    // first send (recorded with the intent): the order shows the capture → reconciled, no second send.
    await crash("fleet-cap-3")
    const b = instance({ status: [landed], capture: [asyncOk()] }, { intentLeaseMs: 40 })
    expect(await b.pay.capture(capture, { idempotencyKey: "fleet-cap-3" })).toMatchObject({ type: "reconciled", reason: "TakenOver", status: "approved" })
    expect(b.stub.count("capture")).toBe(0)
    // The order unchanged, but still inside the processing window: no proof either way, no send.
    // (A millisecond later: an intent finished in the same millisecond as another's record may have
    // finished after its snapshot, so it would leave the other unproven.)
    await new Promise((r) => setTimeout(r, 1))
    await crash("fleet-cap-4")
    const c = instance({ status: [preauth], capture: [asyncOk()] }, { intentLeaseMs: 40, deadlineMs: 80, reconcile: { settleMs: 60_000, pollIntervalMs: 10 } })
    expect(await c.pay.capture(capture, { idempotencyKey: "fleet-cap-4" }).catch((x: unknown) => x)).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
    expect(c.stub.count("capture")).toBe(0)
    // Unchanged past the window (20 ms here): provably not applied, so it is sent, once.
    const d = instance({ status: [preauth], capture: [asyncOk()] }, { intentLeaseMs: 40 })
    await new Promise((r) => setTimeout(r, 60))
    expect(await d.pay.capture(capture, { idempotencyKey: "fleet-cap-4" })).toMatchObject({ type: "async-response", idempotencyKey: "fleet-cap-4" })
    expect(d.stub.count("capture")).toBe(1)
    // An intent written without a snapshot (an older client): nothing can prove it did not land.
    const { Effect } = await import("effect")
    await Effect.runPromise(store.recordIntent({ idempotencyKey: "fleet-cap-5", operation: "CAPTURE", client_orderid: "c-1", orderid: "123", amount: "4.00", currency: "USD", endpoint: String(merchant.endpointId) }, { leaseMs: 1 }))
    await new Promise((r) => setTimeout(r, 5))
    const e = instance({ status: [preauth], capture: [asyncOk()] }, { intentLeaseMs: 40 })
    expect(await e.pay.capture(capture, { idempotencyKey: "fleet-cap-5" }).catch((x: unknown) => x)).toMatchObject({ _tag: "OutcomeUnknown", lastError: "TakenOver" })
    expect(e.stub.count("capture")).toBe(0)
    // An order-creating call taken over is settled by client_orderid: found → reconciled, no second send.
    const saleInput = { client_orderid: "fleet-sale-1", order_desc: "d", amount: "10.00", currency: "USD", address1: "a", city: "c", zip_code: "1", country: "US", phone: "5551234567", email: "j@example.com", ipaddress: "127.0.0.1", card_printed_name: "J D", credit_card_number: "4111111111111111", expire_month: "12", expire_year: "2030", cvv2: "123", redirect_url: "https://shop.example.com/r" }
    const s1 = instance({ sale: [reset()], status: [{ status: 500, body: "" }] }, { deadlineMs: 60, intentLeaseMs: 40 })
    await expect(s1.pay.sale(saleInput, { idempotencyKey: "fleet-sale-1" })).rejects.toMatchObject({ _tag: "OutcomeUnknown" })
    await new Promise((r) => setTimeout(r, 60))
    const s2 = instance({ sale: [asyncOk()], status: [statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale", "merchant-order-id": "fleet-sale-1" })] }, { intentLeaseMs: 40 })
    expect(await s2.pay.sale(saleInput, { idempotencyKey: "fleet-sale-1" })).toMatchObject({ type: "reconciled", reason: "TakenOver" })
    expect(s2.stub.count("sale")).toBe(0)
  })

  it("recover() settles an unfinished order-creating intent from status; the key then replays it", async () => {
    const saleInput = { client_orderid: "fleet-sale-2", order_desc: "d", amount: "10.00", currency: "USD", address1: "a", city: "c", zip_code: "1", country: "US", phone: "5551234567", email: "j@example.com", ipaddress: "127.0.0.1", card_printed_name: "J D", credit_card_number: "4111111111111111", expire_month: "12", expire_year: "2030", cvv2: "123", redirect_url: "https://shop.example.com/r" }
    const crashed = instance({ sale: [reset()], status: [{ status: 500, body: "" }] }, { deadlineMs: 60, intentLeaseMs: 40 })
    await expect(crashed.pay.sale(saleInput, { idempotencyKey: "fleet-sale-2" })).rejects.toMatchObject({ _tag: "OutcomeUnknown" })
    await new Promise((r) => setTimeout(r, 60))
    const found = statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale", "merchant-order-id": "fleet-sale-2" })
    const worker = instance({ status: [found], sale: [asyncOk()] })
    const report = await worker.pay.recover({ olderThanMs: 0, leaseMs: 1000 })
    expect(report.applied).toBeGreaterThanOrEqual(1)
    const replay = await worker.pay.sale(saleInput, { idempotencyKey: "fleet-sale-2" })
    expect(replay).toMatchObject({ type: "reconciled", status: "approved", idempotencyKey: "fleet-sale-2" })
    expect(worker.stub.count("sale")).toBe(0)
    expect(await createPayClient({ baseUrl: "http://gw.test", ...merchant }).recover()).toEqual({ claimed: 0, applied: 0, notApplied: 0, unresolved: 0, unknown: 0 })
  })

  it("runs a callback's effect once across instances, even when delivered to both at once", async () => {
    const status = [statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale" })]
    const a = instance({ status })
    const b = instance({ status })
    let runs = 0
    const slow = async () => {
      runs++
      await new Promise((r) => setTimeout(r, 30))
    }
    const ha = a.pay.callbackHandler({ onCallback: slow })
    const hb = b.pay.callbackHandler({ onCallback: slow })
    const q = new URLSearchParams({ status: "approved", orderid: "123", client_orderid: "c-1", type: "sale", amount: "10.00" })
    q.set("control", callbackControl({ status: "approved", orderid: "123", client_orderid: "c-1" }, merchant.controlKey))
    const req = () => new Request(`https://shop.example/cb?${q}`)
    const answers = await Promise.all([ha(req()), hb(req())])
    expect(answers.map((r) => r.status).sort()).toEqual([200, 500])
    expect(runs).toBe(1)
    expect((await hb(req())).status).toBe(200)
    expect(runs).toBe(1)
  })
})

describe("PayClient.layerWithStore", () => {
  it("builds the client on the PayStore in context", async () => {
    const { Effect, Layer } = await import("effect")
    const { PayClient, memoryStoreLayer } = await import("../../src/index")
    const stub = routedFetch({ status: [preauth], capture: [asyncOk()] })
    const layer = PayClient.layerWithStore({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch }).pipe(Layer.provide(memoryStoreLayer()))
    const program = Effect.gen(function*() {
      const pay = yield* PayClient
      const a = yield* pay.capture(capture, { idempotencyKey: "layer-1" })
      const b = yield* pay.capture(capture, { idempotencyKey: "layer-1" })
      return [a, b] as const
    })
    const [a, b] = await Effect.runPromise(Effect.scoped(program.pipe(Effect.provide(layer))))
    expect(b).toEqual(a)
    expect(stub.count("capture")).toBe(1)
  })
})
