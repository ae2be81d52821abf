/**
 * Capture and return callbacks are proven by one specific transaction (`status` with
 * `by-request-sn` on the serial numbers this client's calls got back), against the in-process
 * simulator: genuine ones are delivered once each, forged or replayed ones with a changed amount,
 * type or approval code never are, and a transaction never vouches for two deliveries.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, type ConfirmedCallback, type PayClientOptions, type PromisePayClient } from "../../src/index"
import { openMemoryStore } from "../../src/store/index"
import { openPgliteStore } from "../../src/store/pglite"
import type { PayStoreHandle } from "../../src/store/service"
import { saleInput } from "../support/fixtures"
import { clientOptions } from "../support/sim"
import { callbacksIn, collectingSimulator } from "../support/callback-world"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const CALLBACK_URL = "https://shop.example.com/paykit/callback"

/** A simulator whose callbacks are collected (answered 200) for the test to deliver itself. */
function world(extra: Partial<PayClientOptions> = {}) {
  const { sim, sent } = collectingSimulator()
  const client = (more: Partial<PayClientOptions> = {}) => createPayClient(clientOptions(sim, { ...extra, ...more }))
  /** Lets due work run (finality, callback delivery). */
  const settle = async () => {
    await sim.clock.advance(1)
    await new Promise((r) => setTimeout(r, 5))
  }
  const callbacksOf = (orderid: string, type?: string) => callbacksIn(sent, orderid, type)
  return { sim, client, settle, callbacksOf }
}

const request = (query: string) => new Request(`${CALLBACK_URL}?${query}`)

/** The same callback with unsigned fields changed (`undefined` removes one); the control stays valid. */
function forge(query: string, changes: Record<string, string | undefined>): string {
  const p = new URLSearchParams(query)
  for (const [k, v] of Object.entries(changes)) v === undefined ? p.delete(k) : p.set(k, v)
  return p.toString()
}

function recorder(pay: PromisePayClient, onRun?: () => Promise<void>) {
  const seen: Array<ConfirmedCallback> = []
  const handler = pay.callbackHandler({
    onCallback: async (cb) => {
      seen.push(cb)
      await onRun?.()
    }
  })
  const deliver = async (query: string) => (await handler(request(query))).status
  return { seen, deliver, handler }
}

/** The `serial-number` of a call's reply (a reconciled result has none). */
const serialOf = (reply: object) => ("serial-number" in reply ? reply["serial-number"] : undefined)

async function paidSale(pay: PromisePayClient, settle: () => Promise<void>, amount = "10.00") {
  const input = saleInput({ amount, server_callback_url: CALLBACK_URL })
  const ack = await pay.sale(input)
  await settle()
  return { client_orderid: input.client_orderid, orderid: String(ack["paynet-order-id"]) }
}

describe("capture and return callbacks are proven by one transaction (memory ledger)", () => {
  const w = world()
  const pay = w.client()
  afterAll(() => w.sim.close())

  it("two partial returns (3.00, 5.00) are delivered once each; changed amounts, a second 5.00, a changed approval code or type never are", async () => {
    const order = await paidSale(pay, w.settle)
    const r1 = await pay.return({ ...order, amount: "3.00", currency: "USD" })
    await w.settle()
    const r2 = await pay.return({ ...order, amount: "5.00", currency: "USD" })
    await w.settle()
    const [cb3, cb5] = w.callbacksOf(order.orderid, "reversal")
    expect([cb3, cb5].map((q) => new URLSearchParams(q).get("amount"))).toEqual(["3.00", "5.00"])
    const { seen, deliver } = recorder(pay)
    const forgeries = [
      forge(cb3!, { amount: "5.00" }), // the 3.00 one replayed as 5.00
      forge(cb3!, { amount: "2.00" }), // a changed amount below the total
      forge(cb5!, { amount: "8.00" }), // the whole total
      forge(cb5!, { "approval-code": "999999" }), // a changed approval code
      forge(cb5!, { type: "capture" }) // a changed type
    ]
    for (const f of forgeries) expect(await deliver(f), f).not.toBe(200)
    expect(seen).toEqual([])
    expect(await deliver(cb3!)).toBe(200)
    expect(await deliver(cb5!)).toBe(200)
    expect(await deliver(cb5!)).toBe(200) // a byte-for-byte redelivery: acknowledged, not run again
    // A second 5.00 (other unsigned bytes, or none of the per-transaction fields) beyond the one real 5.00.
    for (const f of [forge(cb5!, { descriptor: "OTHER" }), forge(cb5!, { "approval-code": undefined, "processor-rrn": undefined }), forge(cb3!, { descriptor: "OTHER" })]) {
      expect(await deliver(f), f).toBe(403)
    }
    for (const f of forgeries) expect(await deliver(f), f).not.toBe(200)
    expect(seen.map((c) => [c.type, c.amount, c.serialNumber])).toEqual([
      ["reversal", "3.00", serialOf(r1)],
      ["reversal", "5.00", serialOf(r2)]
    ])
  })

  it("two equal partial returns of 5.00 are both delivered, a replay of either never a third time", async () => {
    const order = await paidSale(pay, w.settle)
    for (let i = 0; i < 2; i++) {
      await pay.return({ ...order, amount: "5.00", currency: "USD" })
      await w.settle()
    }
    const genuine = w.callbacksOf(order.orderid, "reversal")
    expect(genuine).toHaveLength(2)
    const { seen, deliver } = recorder(pay)
    expect(await deliver(genuine[0]!)).toBe(200)
    expect(await deliver(genuine[1]!)).toBe(200)
    expect(await deliver(forge(genuine[0]!, { descriptor: "REPLAY" }))).toBe(403)
    expect(await deliver(forge(genuine[1]!, { merchantdata: "x" }))).toBe(403)
    expect(await deliver(forge(genuine[1]!, { "approval-code": undefined, "processor-rrn": undefined }))).toBe(403)
    expect(await deliver(genuine[1]!)).toBe(200)
    expect(seen.map((c) => c.amount)).toEqual(["5.00", "5.00"])
    expect(new Set(seen.map((c) => c.serialNumber)).size).toBe(2)
  })

  it("without approval codes in the callbacks, two real 5.00 returns vouch for two deliveries at most", async () => {
    const order = await paidSale(pay, w.settle)
    for (let i = 0; i < 2; i++) {
      await pay.return({ ...order, amount: "5.00", currency: "USD" })
      await w.settle()
    }
    // A gateway that sends no per-transaction fields: both callbacks are the same bytes.
    const bare = forge(w.callbacksOf(order.orderid, "reversal")[0]!, { "approval-code": undefined, "processor-rrn": undefined })
    const { seen, deliver } = recorder(pay)
    expect(await deliver(bare)).toBe(200)
    expect(await deliver(forge(bare, { descriptor: "SECOND" }))).toBe(200)
    expect(await deliver(forge(bare, { descriptor: "THIRD" }))).toBe(403)
    expect(await deliver(forge(bare, { amount: "10.00" }))).not.toBe(200)
    expect(seen.map((c) => c.amount)).toEqual(["5.00", "5.00"])
    expect(new Set(seen.map((c) => c.serialNumber)).size).toBe(2)
  })

  it("partial captures of a preauth: each delivered once; a third 4.00 or the whole 8.00 never", async () => {
    const input = saleInput({ amount: "10.00", server_callback_url: CALLBACK_URL })
    const ack = await pay.preauth(input)
    await w.settle()
    const order = { client_orderid: input.client_orderid, orderid: String(ack["paynet-order-id"]) }
    for (let i = 0; i < 2; i++) {
      await pay.capture({ ...order, amount: "4.00", currency: "USD" })
      await w.settle()
    }
    const captures = w.callbacksOf(order.orderid, "capture")
    expect(captures).toHaveLength(2)
    const { seen, deliver } = recorder(pay)
    expect(await deliver(forge(captures[0]!, { amount: "8.00" }))).not.toBe(200)
    expect(await deliver(forge(captures[0]!, { amount: "2.00" }))).not.toBe(200)
    expect(await deliver(forge(captures[0]!, { type: "reversal" }))).not.toBe(200)
    for (const q of captures) expect(await deliver(q)).toBe(200)
    expect(await deliver(forge(captures[1]!, { "approval-code": undefined, "processor-rrn": undefined }))).toBe(403)
    expect(seen.map((c) => [c.type, c.amount])).toEqual([["capture", "4.00"], ["capture", "4.00"]])
  })

  it("a handler failure gives the transaction back: the gateway's retry delivers it, once", async () => {
    const order = await paidSale(pay, w.settle)
    await pay.return({ ...order, amount: "6.00", currency: "USD" })
    await w.settle()
    const [genuine] = w.callbacksOf(order.orderid, "reversal")
    let fail = true
    const seen: Array<string> = []
    const handler = pay.callbackHandler({
      onCallback: (cb) => {
        if (fail) {
          fail = false
          throw new Error("merchant db down")
        }
        seen.push(cb.amount)
      }
    })
    expect((await handler(request(genuine!))).status).toBe(500)
    expect((await handler(request(genuine!))).status).toBe(200)
    expect((await handler(request(forge(genuine!, { descriptor: "AGAIN" })))).status).toBe(403)
    expect(seen).toEqual(["6.00"])
  })

  it("concurrent deliveries proving one transaction run onCallback once", async () => {
    const order = await paidSale(pay, w.settle)
    await pay.return({ ...order, amount: "4.00", currency: "USD" })
    await w.settle()
    const [genuine] = w.callbacksOf(order.orderid, "reversal")
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => (release = r))
    const { seen, deliver } = recorder(pay, () => gate)
    const all = Promise.all([deliver(genuine!), deliver(forge(genuine!, { descriptor: "A" })), deliver(forge(genuine!, { descriptor: "B" })), deliver(genuine!)])
    await new Promise((r) => setTimeout(r, 50))
    release()
    const answers = await all
    expect(seen).toHaveLength(1)
    expect(answers.filter((s) => s === 200)).toHaveLength(1)
    expect(await deliver(genuine!)).toBe(200)
    expect(seen).toHaveLength(1)
  })
  it("a return whose reply was lost (reconciled, no serial number) is proven once by the order's total, a variant never", async () => {
    const order = await paidSale(pay, w.settle)
    w.sim.faults.add({ operation: "RETURN", kind: "reset-after", count: 1 })
    const result = await pay.return({ ...order, amount: "10.00", currency: "USD" })
    w.sim.faults.clear()
    expect(result).toMatchObject({ type: "reconciled" })
    await w.settle()
    const [cb] = w.callbacksOf(order.orderid, "reversal")
    const { seen, deliver } = recorder(pay)
    expect(await deliver(forge(cb!, { amount: "4.00" }))).toBe(500)
    expect(await deliver(cb!)).toBe(200)
    expect(await deliver(forge(cb!, { descriptor: "X" }))).toBe(403)
    expect(seen.map((c) => [c.amount, c.serialNumber])).toEqual([["10.00", undefined]])
  })
})

describe("a capture or return made outside this client (the gateway's back office)", () => {
  const w = world()
  const pay = w.client()
  const backOffice = w.client()
  afterAll(() => w.sim.close())

  it("only the order's whole total proves it, once per order; a second one stays unconfirmed, a replay is refused", async () => {
    const order = await paidSale(pay, w.settle)
    await backOffice.return({ ...order, amount: "3.00", currency: "USD" })
    await w.settle()
    const { seen, deliver } = recorder(pay)
    const [cb3] = w.callbacksOf(order.orderid, "reversal")
    expect(await deliver(forge(cb3!, { amount: "2.00" }))).toBe(500)
    expect(await deliver(cb3!)).toBe(200)
    expect(await deliver(forge(cb3!, { descriptor: "REPLAY" }))).toBe(403)
    await backOffice.return({ ...order, amount: "5.00", currency: "USD" })
    await w.settle()
    const cb5 = w.callbacksOf(order.orderid, "reversal")[1]!
    // 5.00 is not the whole 8.00 and no serial number is known: not delivered as verified.
    expect(await deliver(cb5)).toBe(500)
    expect(await deliver(forge(cb5, { amount: "8.00" }))).toBe(403)
    expect(seen.map((c) => [c.amount, c.serialNumber])).toEqual([["3.00", undefined]])
  })

  it("beside this client's own return, a back-office one is proven once by what the known transaction leaves of the total", async () => {
    const order = await paidSale(pay, w.settle)
    await pay.return({ ...order, amount: "2.00", currency: "USD" })
    await w.settle()
    await backOffice.return({ ...order, amount: "3.00", currency: "USD" })
    await w.settle()
    const [ours, theirs] = w.callbacksOf(order.orderid, "reversal")
    const { seen, deliver } = recorder(pay)
    expect(await deliver(forge(theirs!, { amount: "5.00" }))).toBe(500) // the whole total, not the remainder
    expect(await deliver(forge(ours!, { amount: "3.00" }))).toBe(500) // the remainder, but not the last transaction's codes
    expect(await deliver(theirs!)).toBe(200)
    expect(await deliver(forge(theirs!, { descriptor: "REPLAY" }))).toBe(403)
    expect(await deliver(ours!)).toBe(200)
    expect(seen.map((c) => c.amount)).toEqual(["3.00", "2.00"])
  })
})

describe.each([
  ["memory store", () => openMemoryStore()],
  ["PGlite store", () => openPgliteStore()]
] as const)("a fleet on a shared %s", (_name, open) => {
  const w = world()
  let store: PayStoreHandle
  afterAll(async () => {
    await store?.close()
    await w.sim.close()
  })

  it("a return made on one instance proves its callback on another, once across the fleet; a forged second 5.00 never", async () => {
    store = await open()
    const a = w.client({ store })
    const b = w.client({ store })
    const order = await paidSale(a, w.settle)
    for (let i = 0; i < 2; i++) {
      await a.return({ ...order, amount: "5.00", currency: "USD" })
      await w.settle()
    }
    const genuine = w.callbacksOf(order.orderid, "reversal")
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => (release = r))
    const onA = recorder(a, () => gate)
    const onB = recorder(b, () => gate)
    // Both genuine callbacks and a variant of the first, at once, on both instances.
    const all = Promise.all([
      onB.deliver(genuine[0]!),
      onA.deliver(forge(genuine[0]!, { descriptor: "A" })),
      onA.deliver(genuine[1]!),
      onB.deliver(forge(genuine[1]!, { descriptor: "B" }))
    ])
    await new Promise((r) => setTimeout(r, 100))
    release()
    await all
    // Whatever ran first, each transaction vouched once: the genuine ones redelivered until 200.
    for (const q of genuine) for (let i = 0; i < 3 && (await onB.deliver(q)) !== 200; i++);
    expect(await onA.deliver(forge(genuine[1]!, { "approval-code": undefined, "processor-rrn": undefined }))).toBe(403)
    expect(await onB.deliver(forge(genuine[0]!, { amount: "10.00" }))).not.toBe(200)
    const seen = [...onA.seen, ...onB.seen]
    expect(seen.map((c) => c.amount)).toEqual(["5.00", "5.00"])
    expect(new Set(seen.map((c) => c.serialNumber)).size).toBe(2)
  }, 300_000)
})
