import { afterEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { engineOf } from "../src/simulator/create"
import { callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

let sim: Simulator
const others: Simulator[] = []
// Forgetting orders must never break a ledger invariant of the orders kept.
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
  for (const s of others.splice(0)) await s.close()
})

const HOUR = 60 * 60 * 1000
const DAY = 24 * HOUR
const login = testMerchant.login

async function sale(overrides: Record<string, string | undefined> = {}, on: Simulator = sim) {
  const fields = requests.sale(overrides)
  const reply = await signedRequest(on, "SALE", fields)
  expect(reply.status).toBe(200)
  return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
}

/** The STATUS reply of an order, whatever its HTTP status. */
const status = (ids: { orderid: string; client_orderid: string }, on: Simulator = sim) => signedRequest(on, "STATUS", { login, ...ids })

describe("retention: by count", () => {
  it("keeps at most maxOrders final orders, forgetting the oldest; the newest still answer", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: 10 } })
    const made = []
    for (let i = 0; i < 40; i++) made.push(await sale())
    await statusOf(sim, made[39]!.orderid, made[39]!.client_orderid)
    // Checked when a request arrives: at most the limit, plus the one order the last request made.
    expect(sim.orders().length).toBeLessThanOrEqual(11)
    expect(sim.orders().length).toBeGreaterThanOrEqual(9)
    const kept = new Set(sim.orders().map((o) => o.orderid))
    // Oldest first: every kept order is newer than every forgotten one.
    const firstKept = made.findIndex((m) => kept.has(m.orderid))
    expect(made.slice(firstKept).every((m) => kept.has(m.orderid))).toBe(true)
    expect(await statusOf(sim, made[39]!.orderid, made[39]!.client_orderid)).toMatchObject({ status: "approved" })
  })

  it("a forgotten order answers status exactly like an orderid that never existed (order-not-found)", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: 2 } })
    const first = await sale()
    for (let i = 0; i < 5; i++) await sale()
    await sale()
    expect(sim.order(first.orderid)).toBeUndefined()
    const forgotten = await status(first)
    expectError(forgotten, "order-not-found")
    const never = await status({ orderid: "999999999", client_orderid: first.client_orderid })
    expectError(never, "order-not-found")
    const norm = (m: unknown) => String(m).replace(first.orderid, "X").replace("999999999", "X")
    expect(norm(forgotten.body["error-message"])).toBe(norm(never.body["error-message"]))
    expect(forgotten.body["merchant-order-id"]).toBe(first.client_orderid)
    // By client_orderid alone too; capture, void and return find nothing either.
    expectError(await signedRequest(sim, "STATUS", { login, client_orderid: first.client_orderid }), "order-not-found")
    expectError(await signedRequest(sim, "RETURN", { login, ...first, amount: "1.00", currency: "USD", comment: "r" }), "order-not-found")
  })

  it("its client_orderid can be used again: a new order with a new orderid (orderids are never reused)", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: 1 } })
    const first = await sale()
    await sale()
    await sale()
    expect(sim.order(first.orderid)).toBeUndefined()
    const again = await sale({ client_orderid: first.client_orderid })
    expect(Number(again.orderid)).toBeGreaterThan(Number(first.orderid) + 2)
  })

  it("orders still processing are kept whatever the count, and forgotten once final", async () => {
    sim = createSimulator({ processingDelayMs: 60_000, retention: { maxOrders: 3 } })
    const made = []
    for (let i = 0; i < 12; i++) made.push(await sale())
    expect(sim.orders()).toHaveLength(12)
    expect(sim.orders().every((o) => o.status === "processing" && o.inFlight === "10.00")).toBe(true)
    await sim.clock.advance(60_000)
    await sale()
    expect(sim.orders().length).toBeLessThanOrEqual(4)
    expect(sim.orderByClientOrderId(made[0]!.client_orderid)).toBeUndefined()
  })

  it("an unsettled order that is forgotten takes its settlement task with it", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: 2 } })
    for (let i = 0; i < 8; i++) await sale()
    await sale()
    const settles = sim.snapshot().pendingJobs.filter((j) => j.kind === "settle")
    const kept = new Set(sim.orders().map((o) => o.orderid))
    expect(settles.length).toBeGreaterThan(0)
    expect(settles.every((j) => j.kind === "settle" && kept.has(j.orderid))).toBe(true)
  })
})

describe("retention: by age on the simulator clock", () => {
  it("forgets a final order whose last transaction is older than maxAgeMs; newer activity keeps an order", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: Number.POSITIVE_INFINITY, maxAgeMs: 10 * HOUR } })
    const old = await sale()
    const refunded = await sale()
    await sim.clock.advance(5 * HOUR)
    const ret = await signedRequest(sim, "RETURN", { login, ...refunded, amount: "1.00", currency: "USD", comment: "partial" })
    expect(ret.status).toBe(200)
    await sim.clock.advance(6 * HOUR)
    const fresh = await sale()
    expect(sim.order(old.orderid)).toBeUndefined()
    expect(sim.order(refunded.orderid)).toMatchObject({ returned: "1.00" })
    expect(sim.order(fresh.orderid)).toBeDefined()
    await sim.clock.advance(5 * HOUR)
    await statusOf(sim, fresh.orderid, fresh.client_orderid)
    expect(sim.order(refunded.orderid)).toBeUndefined()
  })

  it("keeps an order whose callback is still being retried, and its callback log, until delivery succeeds", async () => {
    let down = true
    const receiver = callbackReceiver(() => (down ? 503 : 200))
    sim = createSimulator({ processingDelayMs: 0, callbackFetch: receiver.fetch, retention: { maxOrders: 1, maxAgeMs: HOUR } })
    const pending = await sale({ server_callback_url: "https://merchant.example/cb" })
    await sim.clock.advance(1)
    for (let i = 0; i < 3; i++) await sale()
    await sim.clock.advance(2 * HOUR)
    await sale()
    expect(sim.order(pending.orderid)).toMatchObject({ status: "approved" })
    expect(sim.callbackAttempts().filter((a) => a.orderid === pending.orderid).length).toBeGreaterThan(1)
    down = false
    await sim.clock.advance(DAY)
    expect(receiver.received.at(-1)).toMatchObject({ orderid: pending.orderid })
    await sale()
    expect(sim.order(pending.orderid)).toBeUndefined()
    expect(sim.callbackAttempts().filter((a) => a.orderid === pending.orderid)).toEqual([])
  })

  it("keeps an order of the chargeback card until its chargeback has happened", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ processingDelayMs: 0, callbackFetch: receiver.fetch, retention: { maxOrders: 1, maxAgeMs: HOUR } })
    const card = await sale({ credit_card_number: "4000000000001976", server_callback_url: "https://merchant.example/cb" })
    await sim.clock.advance(5 * DAY)
    await sale()
    await sale()
    expect(sim.order(card.orderid)).toMatchObject({ status: "approved", settled: true, chargedBack: "0.00" })
    await sim.clock.advance(30 * DAY)
    expect(receiver.received.map((r) => r["type"])).toEqual(["sale", "chargeback"])
    await sim.clock.advance(2 * HOUR)
    await sale()
    expect(sim.order(card.orderid)).toBeUndefined()
  })
})

describe("retention: snapshots", () => {
  it("a snapshot after a prune restores: kept orders answer, forgotten ones are unknown, ids continue, invariants hold", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: 4 } })
    const made = []
    for (let i = 0; i < 12; i++) made.push(await sale())
    await sale()
    const kept = sim.orders().map((o) => o.orderid)
    expect(kept.length).toBeLessThan(13)
    const snapshot = JSON.parse(JSON.stringify(sim.snapshot()))
    expect(snapshot.version).toBe(2)
    expect(snapshot.orders.map((o: { orderid: string }) => o.orderid)).toEqual(kept)
    await sim.close()
    sim = createSimulator({ restore: snapshot, retention: { maxOrders: 4 } })
    expect(sim.orders().map((o) => o.orderid)).toEqual(kept)
    const last = made[11]!
    expect(await statusOf(sim, last.orderid, last.client_orderid)).toMatchObject({ status: "approved" })
    expectError(await status(made[0]!), "order-not-found")
    const next = await sale()
    expect(Number(next.orderid)).toBeGreaterThan(Math.max(...kept.map(Number)))
    // The first reply of a kept order replays with its shape (kept compactly, rebuilt on read).
    const replay = await signedRequest(sim, "SALE", { ...requests.sale({ client_orderid: last.client_orderid }) })
    expect(replay.body).toMatchObject({ type: "async-response", "paynet-order-id": last.orderid, "merchant-order-id": last.client_orderid, status: "approved" })
    expect(sim.checkInvariants()).toEqual([])
  })
})

describe("retention: options", () => {
  it("defaults keep a day of a busy sandbox", () => {
    sim = createSimulator()
    expect({ maxOrders: engineOf(sim)!.retention.maxOrders, maxAgeMs: engineOf(sim)!.retention.maxAgeMs }).toEqual({ maxOrders: 200_000, maxAgeMs: 120 * DAY })
  })

  it("bad limits are refused naming the field and the rule", () => {
    sim = createSimulator()
    expect(() => createSimulator({ retention: { maxOrders: 0 } })).toThrow("retention.maxOrders: must be an integer of at least 1, or Infinity (got 0)")
    expect(() => createSimulator({ retention: { maxOrders: 2.5 } })).toThrow(/^retention\.maxOrders: /)
    expect(() => createSimulator({ retention: { maxAgeMs: -1 } })).toThrow("retention.maxAgeMs: must be a number of milliseconds of at least 0, or Infinity (got -1)")
    expect(() => createSimulator({ retention: { maxAgeMs: Number.NaN } })).toThrow(/^retention\.maxAgeMs: /)
    expect(() => createSimulator({ retention: { maxOrders: "10" as unknown as number } })).toThrow(/^retention\.maxOrders: /)
  })

  it("Infinity keeps every order", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: Number.POSITIVE_INFINITY, maxAgeMs: Number.POSITIVE_INFINITY } })
    for (let i = 0; i < 5; i++) await sale()
    await sim.clock.advance(365 * DAY)
    await sale()
    expect(sim.orders()).toHaveLength(6)
  })

  it("two simulators do not share retention state", async () => {
    sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: 1 } })
    const other = createSimulator({ processingDelayMs: 0 })
    others.push(other)
    for (let i = 0; i < 4; i++) {
      await sale()
      await sale({}, other)
    }
    expect(sim.orders().length).toBeLessThanOrEqual(2)
    expect(other.orders()).toHaveLength(4)
  })
})
