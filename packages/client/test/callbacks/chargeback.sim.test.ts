/**
 * Chargeback callbacks are proven by the order's `chargeback-amount` (the gateway makes chargebacks,
 * so no serial number of this client names one), against the in-process simulator: the genuine one
 * reaches `onCallback` exactly once, forged variants (another amount, approval code or rrn) never,
 * concurrent deliveries once, and one the order does not show yet is refused with 500.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, type ConfirmedCallback, type PayClientOptions, type PromisePayClient } from "../../src/index"
import { openMemoryStore } from "../../src/store/index"
import { openPgliteStore } from "../../src/store/pglite"
import type { PayStoreHandle } from "../../src/store/service"
import { saleInput } from "../support/fixtures"
import { BASE_URL, clientOptions } from "../support/sim"
import { collectingSimulator } from "../support/callback-world"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const CALLBACK_URL = "https://shop.example.com/paykit/callback"
const DAY = 24 * 60 * 60 * 1000
const CHARGEBACK_CARD = "4000000000001976"

/** A simulator whose callbacks are collected (answered 200) for the test to deliver itself. */
function world() {
  const { sim, sent } = collectingSimulator()
  const client = (more: Partial<PayClientOptions> = {}) => createPayClient(clientOptions(sim, more))
  /** Advances the simulator's clock and lets the due work (callback delivery) run. */
  const advance = async (ms: number) => {
    await sim.clock.advance(ms)
    await new Promise((r) => setTimeout(r, 5))
  }
  const callbacksOf = (orderid: string, type: string) =>
    sent.filter((q) => {
      const p = new URLSearchParams(q)
      return p.get("orderid") === orderid && p.get("type") === type
    })
  /** Charges back `amount` of a settled order by the simulator's test route. */
  const chargeback = async (orderid: string, amount: string) => {
    const r = await sim.fetch(new Request(`${BASE_URL}/__sim/orders/${orderid}/chargeback`, { method: "POST", body: JSON.stringify({ amount }) }))
    expect(r.status).toBe(200)
    await advance(1)
  }
  return { sim, client, advance, callbacksOf, chargeback }
}

/** The same callback with unsigned fields changed (`undefined` removes one); the control stays valid. */
function forge(query: string, changes: Record<string, string | undefined>): string {
  const p = new URLSearchParams(query)
  for (const [k, v] of Object.entries(changes)) v === undefined ? p.delete(k) : p.set(k, v)
  return p.toString()
}

/** Variants as the review sent them: a small amount, approval code and rrn changed each time. */
const smallForgeries = (genuine: string) =>
  [1, 2, 3, 4].map((i) => forge(genuine, { amount: "0.01", "approval-code": `99000${i}`, "processor-rrn": `99000000000${i}` }))

function recorder(pay: PromisePayClient, onRun?: () => Promise<void>) {
  const seen: Array<ConfirmedCallback> = []
  const handler = pay.callbackHandler({
    onCallback: async (cb) => {
      seen.push(cb)
      await onRun?.()
    }
  })
  const deliver = async (query: string) => (await handler(new Request(`${CALLBACK_URL}?${query}`))).status
  return { seen, deliver }
}

async function sale(pay: PromisePayClient, w: ReturnType<typeof world>, card?: string) {
  const input = saleInput({ amount: "10.00", server_callback_url: CALLBACK_URL, ...(card === undefined ? {} : { credit_card_number: card }) })
  const ack = await pay.sale(input)
  await w.advance(1)
  return { client_orderid: input.client_orderid, orderid: String(ack["paynet-order-id"]) }
}

describe("chargeback callbacks are proven by the order's chargeback-amount", () => {
  const w = world()
  const pay = w.client()
  afterAll(() => w.sim.close())

  it("the chargeback test card: the genuine chargeback runs onCallback once; small forged variants never, before or after it", async () => {
    const order = await sale(pay, w, CHARGEBACK_CARD)
    await w.advance(32 * DAY) // settled, then charged back 30 days later
    const [genuine] = w.callbacksOf(order.orderid, "chargeback")
    expect(new URLSearchParams(genuine).get("amount")).toBe("10.00")
    const { seen, deliver } = recorder(pay)
    // Before the genuine one is delivered: none is the unvouched remainder (10.00) → never run.
    for (const f of smallForgeries(genuine!)) expect(await deliver(f), f).toBe(500)
    expect(seen).toEqual([])
    expect(await deliver(genuine!)).toBe(200)
    expect(await deliver(genuine!)).toBe(200) // a byte-for-byte redelivery: acknowledged, not run again
    // After it: the chargeback total is vouched for, every other chargeback claim is contradicted.
    for (const f of [...smallForgeries(genuine!), forge(genuine!, { descriptor: "REPLAY" }), forge(genuine!, { amount: "10.00", "approval-code": undefined, "processor-rrn": undefined })]) {
      expect(await deliver(f), f).toBe(403)
    }
    expect(seen.map((c) => [c.type, c.amount, c.confirmedByStatus, c.orderOutcome])).toEqual([["chargeback", "10.00", true, "charged-back"]])
  })

  it("two partial chargebacks (3.00, then 2.00) are delivered once each; the whole 5.00, a second 2.00 or 0.01 never", async () => {
    const order = await sale(pay, w)
    await w.advance(2 * DAY) // settled
    const { seen, deliver } = recorder(pay)
    await w.chargeback(order.orderid, "3.00")
    const [first] = w.callbacksOf(order.orderid, "chargeback")
    expect(await deliver(forge(first!, { amount: "2.00" }))).toBe(500) // not the remainder of 3.00
    expect(await deliver(first!)).toBe(200)
    await w.chargeback(order.orderid, "2.00")
    const [, second] = w.callbacksOf(order.orderid, "chargeback")
    expect(new URLSearchParams(second).get("amount")).toBe("2.00")
    expect(await deliver(forge(second!, { amount: "5.00" }))).toBe(403) // overlaps the vouched 3.00
    expect(await deliver(forge(first!, { descriptor: "AGAIN" }))).toBe(500) // not the last chargeback's codes
    expect(await deliver(second!)).toBe(200)
    for (const f of [forge(second!, { descriptor: "AGAIN" }), ...smallForgeries(second!), forge(first!, { descriptor: "AGAIN" })]) {
      expect(await deliver(f), f).toBe(403)
    }
    expect(seen.map((c) => c.amount)).toEqual(["3.00", "2.00"])
  })

  it("a chargeback the order does not show (a signed sale callback retyped) is 500 and never runs", async () => {
    const order = await sale(pay, w)
    const [saleCallback] = w.callbacksOf(order.orderid, "sale")
    const { seen, deliver } = recorder(pay)
    // The signed sale callback dressed as a chargeback: status shows a sale, not a chargeback.
    expect(await deliver(forge(saleCallback!, { type: "chargeback", amount: "0.01" }))).toBe(500)
    expect(await deliver(forge(saleCallback!, { type: "chargeback" }))).toBe(500)
    expect(seen).toEqual([])
  })

  it("concurrent deliveries of one chargeback (the same bytes, variants, forgeries) run onCallback once", async () => {
    const order = await sale(pay, w, CHARGEBACK_CARD)
    await w.advance(32 * DAY)
    const [genuine] = w.callbacksOf(order.orderid, "chargeback")
    let open: () => void = () => {}
    const gate = new Promise<void>((r) => (open = r))
    const { seen, deliver } = recorder(pay, () => gate)
    const all = Promise.all([
      deliver(genuine!),
      deliver(genuine!),
      deliver(forge(genuine!, { descriptor: "A" })),
      deliver(forge(genuine!, { merchantdata: "B" })),
      ...smallForgeries(genuine!).map(deliver)
    ])
    await new Promise((r) => setTimeout(r, 50))
    open()
    const codes = await all
    expect(codes.filter((c) => c === 200)).toHaveLength(1)
    // The gateway redelivers until 200: the genuine one is then acknowledged without running again.
    expect(await deliver(genuine!)).toBe(200)
    expect(seen.map((c) => c.amount)).toEqual(["10.00"])
  })
})

describe.each([
  ["memory store", () => openMemoryStore()],
  ["PGlite store", () => openPgliteStore()]
] as const)("chargebacks on a fleet sharing a %s", (_name, open) => {
  const w = world()
  let store: PayStoreHandle
  afterAll(async () => {
    await store?.close()
    await w.sim.close()
  })

  it("two instances: the genuine chargeback runs once across both; forged variants never", async () => {
    store = await open()
    const a = w.client({ store })
    const b = w.client({ store })
    const order = await sale(a, w, CHARGEBACK_CARD)
    await w.advance(32 * DAY)
    const [genuine] = w.callbacksOf(order.orderid, "chargeback")
    const onA = recorder(a)
    const onB = recorder(b)
    for (const f of smallForgeries(genuine!)) expect(await onA.deliver(f), f).toBe(500)
    const codes = await Promise.all([onA.deliver(genuine!), onB.deliver(forge(genuine!, { descriptor: "B" }))])
    expect(codes).toContain(200)
    for (let i = 0; i < 3 && (await onB.deliver(genuine!)) !== 200; i++);
    for (const f of smallForgeries(genuine!)) expect(await onB.deliver(f), f).toBe(403)
    expect([...onA.seen, ...onB.seen].map((c) => c.amount)).toEqual(["10.00"])
  }, 300_000)
})
