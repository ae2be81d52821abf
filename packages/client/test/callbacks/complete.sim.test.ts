/**
 * When the claim store fails to record a callback's completion after `onCallback` succeeded: the
 * completion is retried, the gateway is answered 200 (a 500 would make it redeliver, and a
 * redelivery after the lease would run the effect again), and the claims are kept held, never
 * released, so a redelivery within the lease does not run `onCallback` a second time.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, memoryCallbackStore, type CallbackClaimStore, type ConfirmedCallback, type PromisePayClient } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { clientOptions } from "../support/sim"
import { collectingSimulator } from "../support/callback-world"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const CALLBACK_URL = "https://shop.example.com/paykit/callback"
const DAY = 24 * 60 * 60 * 1000

/** The memory claim store with `complete` failing (for keys `failing` selects) the first `times` calls each; records releases. */
function flakyStore(times: number, failing: (key: string) => boolean = () => true) {
  const inner = memoryCallbackStore()
  const failures = new Map<string, number>()
  const released: Array<string> = []
  const completeCalls: Array<string> = []
  const store: CallbackClaimStore = {
    claim: (q, lease) => inner.claim(q, lease),
    complete: async (q) => {
      completeCalls.push(q)
      const n = failures.get(q) ?? 0
      if (failing(q) && n < times) {
        failures.set(q, n + 1)
        throw new Error("db down")
      }
      return inner.complete(q)
    },
    release: (q) => {
      released.push(q)
      return inner.release(q)
    }
  }
  return { store, released, completeCalls }
}

function world() {
  const { sim, sent } = collectingSimulator()
  const pay = createPayClient(clientOptions(sim))
  const advance = async (ms: number) => {
    await sim.clock.advance(ms)
    await new Promise((r) => setTimeout(r, 5))
  }
  const callbackOf = (orderid: string, type: string) =>
    sent.find((q) => {
      const p = new URLSearchParams(q)
      return p.get("orderid") === orderid && p.get("type") === type
    })
  return { sim, pay, advance, callbackOf }
}

function recorder(pay: PromisePayClient, claims: CallbackClaimStore, leaseMs: number) {
  const seen: Array<ConfirmedCallback> = []
  const handler = pay.callbackHandler({ claims, leaseMs, onCallback: (cb) => void seen.push(cb) })
  const deliver = async (query: string) => (await handler(new Request(`${CALLBACK_URL}?${query}`))).status
  return { seen, deliver }
}

const forge = (query: string, changes: Record<string, string>) => {
  const p = new URLSearchParams(query)
  for (const [k, v] of Object.entries(changes)) p.set(k, v)
  return p.toString()
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("completing a claim after onCallback succeeded", () => {
  const w = world()
  afterAll(() => w.sim.close())

  async function saleCallback(card?: string) {
    const input = saleInput({ amount: "10.00", server_callback_url: CALLBACK_URL, ...(card === undefined ? {} : { credit_card_number: card }) })
    const ack = await w.pay.sale(input)
    await w.advance(1)
    const orderid = String(ack["paynet-order-id"])
    return { orderid, client_orderid: input.client_orderid, query: w.callbackOf(orderid, "sale")! }
  }

  it("a store failing twice: the completion is retried, 200, and a redelivery after the lease is a duplicate", async () => {
    const { query } = await saleCallback()
    const flaky = flakyStore(2)
    const { seen, deliver } = recorder(w.pay, flaky.store, 40)
    expect(await deliver(query)).toBe(200)
    await sleep(80) // past the lease
    expect(await deliver(query)).toBe(200)
    expect(await deliver(forge(query, { descriptor: "VARIANT" }))).toBe(200) // the same event, done
    expect(seen).toHaveLength(1)
    expect(flaky.released).toEqual([])
  })

  it("a store that never records it: 200 all the same, the claim kept held (never released), a redelivery within the lease not run", async () => {
    const { query } = await saleCallback()
    const flaky = flakyStore(Number.POSITIVE_INFINITY)
    const { seen, deliver } = recorder(w.pay, flaky.store, 60_000)
    expect(await deliver(query)).toBe(200)
    expect(flaky.completeCalls.length).toBeGreaterThan(1) // retried
    expect(flaky.released).toEqual([])
    expect(await deliver(query)).toBe(500) // held: in progress as far as anyone can tell
    expect(await deliver(forge(query, { descriptor: "VARIANT" }))).toBe(500)
    expect(seen).toHaveLength(1)
  })

  it("a capture's transaction claim failing to complete: 200, and a variant never vouched by it again within the lease", async () => {
    const input = saleInput({ amount: "10.00", server_callback_url: CALLBACK_URL })
    const ack = await w.pay.preauth(input)
    await w.advance(1)
    const order = { client_orderid: input.client_orderid, orderid: String(ack["paynet-order-id"]) }
    await w.pay.capture({ ...order, amount: "4.00", currency: "USD" })
    await w.advance(1)
    const capture = w.callbackOf(order.orderid, "capture")!
    const flaky = flakyStore(Number.POSITIVE_INFINITY, (key) => key.startsWith("paykit-transaction|"))
    const { seen, deliver } = recorder(w.pay, flaky.store, 60_000)
    expect(await deliver(capture)).toBe(200)
    expect(await deliver(capture)).toBe(200) // the callback's own claim was recorded
    expect(await deliver(forge(capture, { descriptor: "VARIANT" }))).toBe(500) // its transaction still held
    expect(seen.map((c) => c.amount)).toEqual(["4.00"])
    expect(flaky.released.filter((k) => k.startsWith("paykit-transaction|"))).toEqual([])
  })

  it("a chargeback whose claims fail to complete: 200 once, variants never run within the lease", async () => {
    const { orderid } = await saleCallback("4000000000001976")
    await w.advance(32 * DAY)
    const chargeback = w.callbackOf(orderid, "chargeback")!
    const flaky = flakyStore(Number.POSITIVE_INFINITY)
    const { seen, deliver } = recorder(w.pay, flaky.store, 60_000)
    const codes = await Promise.all([deliver(chargeback), deliver(forge(chargeback, { descriptor: "VARIANT" }))])
    expect(codes.sort()).toEqual([200, 500])
    expect(await deliver(chargeback)).toBe(500)
    expect(await deliver(forge(chargeback, { amount: "0.01" }))).not.toBe(200)
    expect(seen.map((c) => c.amount)).toEqual(["10.00"])
  })
})
