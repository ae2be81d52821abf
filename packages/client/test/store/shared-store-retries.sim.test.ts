/**
 * Attack suite, merchant retries across clients: two clients sharing one store,
 * a retry with the same idempotencyKey after a crash (a new client on the same store), a store whose
 * methods fail, and deadlines while another instance holds the key.
 */
import { Effect } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { makePayClient, openMemoryStore, resolveConfig, StoreError, type PayStoreService } from "../../src/index"
import { clientOptions } from "../support/sim"
import { startTestTime, testTimeoutSignal, timed, useTestTime } from "../support/test-time"
import { approvedOrder, client, crashHolding, letLand, moved, newSim, opOf, settled, sleep } from "../support/attacks"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const failing = (store: PayStoreService, method: keyof PayStoreService): PayStoreService => ({
  ...store,
  [method]: () => Effect.fail(new StoreError({ method: String(method), adapter: store.adapter, reason: "connection refused" }))
})

describe("attack: two clients on one store", () => {
  it("the same key on two clients at once: one capture, both answers agree", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let sends = 0
      const fetch = async (req: Request) => {
        if (opOf(req) === "capture") {
          sends++
          await sleep(30)
        }
        return sim.fetch(req)
      }
      const a = client(sim, { store, fetch })
      const b = client(sim, { store, fetch })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      const [ra, rb] = await Promise.all([settled(a.capture(input, { idempotencyKey: "shared-1" })), settled(b.capture(input, { idempotencyKey: "shared-1" }))])
      await letLand(sim)
      expect(sends).toBe(1)
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
      expect(ra.ok && rb.ok).toBe(true)
      if (ra.ok && rb.ok) expect(rb.value["paynet-order-id"]).toBe(ra.value["paynet-order-id"])
    } finally {
      await store.close()
      await sim.close()
    }
  })

  it("the same key reused for a different amount on the other client: InputError, nothing sent", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      await client(sim, { store }).capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }, { idempotencyKey: "shared-2" })
      const r = await settled(client(sim, { store }).capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "5.00", currency: "USD" }, { idempotencyKey: "shared-2" }))
      await letLand(sim)
      expect(r.ok ? "ok" : `${r.error._tag}:${String(r.error["field"])}`).toBe("InputError:idempotencyKey")
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })
})

describe("attack: callbacks on two clients sharing one store", () => {
  it("one callback delivered to both instances at once (and its unsigned variant) runs onCallback once", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const { callbackControl } = await import("@paykit/signing")
      const { testMerchant } = await import("@paykit/testkit")
      const o = await approvedOrder(client(sim), "sale")
      let runs = 0
      const onCallback = async () => {
        runs++
        await sleep(30)
      }
      const ha = client(sim, { store }).callbackHandler({ onCallback })
      const hb = client(sim, { store }).callbackHandler({ onCallback })
      const cb = (extra: Record<string, string>) => {
        const p = new URLSearchParams({ status: "approved", orderid: o.orderid, client_orderid: o.client_orderid, merchant_order: o.client_orderid, type: "sale", amount: "10.00", ...extra })
        p.set("control", callbackControl({ status: "approved", orderid: o.orderid, client_orderid: o.client_orderid }, testMerchant.controlKey))
        return new Request(`https://shop.example.com/cb?${p}`)
      }
      const rs = await Promise.all([ha(cb({})), hb(cb({})), ha(cb({ descriptor: "x" })), hb(cb({ type: "rebill" }))])
      expect(runs).toBe(1)
      expect(rs.map((r) => r.status).filter((s) => s === 200).length).toBeGreaterThanOrEqual(1)
      // Redelivered later to either instance: a duplicate.
      expect((await hb(cb({}))).status).toBe(200)
      expect(runs).toBe(1)
    } finally {
      await store.close()
      await sim.close()
    }
  })
})

describe("attack: a merchant retry with the same key after a crash (new client, same store)", () => {
  for (const landed of [true, false]) {
    it(`the crashed instance's capture ${landed ? "had landed" : "never left"}: the new client ${landed ? "reconciles it" : "sends it"}, captured once`, async () => {
      const sim = newSim()
      const store = await openMemoryStore()
      try {
        const o = await approvedOrder(client(sim), "preauth")
        const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
        // Instance A: its capture is processed (or not) and then its fetch never returns; A dies.
        await crashHolding(sim, store, "capture", landed, 150, (instance) => instance.capture(input, { idempotencyKey: "crash-1" }))
        await letLand(sim)
        expect(moved(sim, o.orderid, "capture")).toBe(landed ? 1 : 0)
        // Instance B, after a restart: the same call with the same key.
        const b = client(sim, { store, reconcile: { settleMs: 60, pollIntervalMs: 5 } })
        const r = await settled(b.capture(input, { idempotencyKey: "crash-1" }))
        await letLand(sim)
        expect(r.ok ? String(r.value["type"]) : `${r.error._tag}: ${r.error.message}`).toBe(landed ? "reconciled" : "async-response")
        expect(moved(sim, o.orderid, "capture")).toBe(1)
        expect(sim.order(o.orderid)!.captured).toBe("4.00")
        // And once more: a replay.
        const again = await settled(b.capture(input, { idempotencyKey: "crash-1" }))
        expect(again.ok).toBe(true)
        expect(moved(sim, o.orderid, "capture")).toBe(1)
      } finally {
        await store.close()
        await sim.close()
      }
    })
  }

  it("a sale whose instance died after sending: the new client's same-key call finds the order, one charge", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const { saleInput } = await import("../support/fixtures")
      const input = saleInput()
      await crashHolding(sim, store, "sale", true, 100, (instance) => instance.sale(input, { idempotencyKey: "crash-sale" }))
      const r = await settled(client(sim, { store }).sale(input, { idempotencyKey: "crash-sale" }))
      await letLand(sim)
      expect(r.ok ? String(r.value["type"]) : r.error._tag).toBe("reconciled")
      expect(sim.orders().filter((x) => x.client_orderid === input.client_orderid)).toHaveLength(1)
    } finally {
      await store.close()
      await sim.close()
    }
  })

  it("while another instance holds the key, the caller's deadlineMs and signal still bound the wait", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      await crashHolding(sim, store, "capture", false, 10_000, (instance) => instance.capture(input, { idempotencyKey: "held-1" }))
      const b = client(sim, { store })
      let started = Date.now()
      const r1 = await settled(b.capture(input, { idempotencyKey: "held-1", deadlineMs: 100 }))
      expect(Date.now() - started).toBeLessThan(1000)
      expect(r1.ok ? "ok" : r1.error._tag).toMatch(/^(OutcomeUnknown|Cancelled)$/)
      if (!r1.ok) expect(r1.error["idempotencyKey"]).toBe("held-1")
      started = Date.now()
      const r2 = await settled(b.capture(input, { idempotencyKey: "held-1", signal: testTimeoutSignal(50) }))
      // Far below the 10 s lease the crashed holder left, with room for a loaded CI machine.
      expect(Date.now() - started).toBeLessThan(2000)
      expect(r2.ok ? "ok" : r2.error._tag).toMatch(/^(OutcomeUnknown|Cancelled)$/)
      expect(moved(sim, o.orderid, "capture")).toBe(0)
    } finally {
      await store.close()
      await sim.close()
    }
  })
})

describe("attack: recover() after a crash, then the merchant's retry", () => {
  for (const landed of [true, false]) {
    it(`a return that ${landed ? "landed" : "never left"}: recover settles it as ${landed ? "applied" : "not applied"}; the same key then ${landed ? "replays" : "sends once"}`, async () => {
      const sim = newSim()
      const store = await openMemoryStore()
      try {
        const o = await approvedOrder(client(sim), "sale")
        const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }
        await crashHolding(sim, store, "return", landed, 50, (instance) => instance.return(input, { idempotencyKey: "rec-1" }))
        await letLand(sim)
        await sleep(60)
        const b = client(sim, { store })
        const report = await b.recover({ olderThanMs: 0, leaseMs: 1000, settleMs: 0 })
        expect(report).toMatchObject(landed ? { applied: 1, unresolved: 0 } : { notApplied: 1, unresolved: 0 })
        const r = await settled(b.return(input, { idempotencyKey: "rec-1" }))
        await letLand(sim)
        expect(r.ok ? "ok" : `${r.error._tag}: ${r.error.message}`).toBe("ok")
        expect(sim.order(o.orderid)!.returned).toBe("3.00")
      } finally {
        await store.close()
        await sim.close()
      }
    })
  }
})

describe("attack: interrupted while waiting for another instance's key", () => {
  it("an Effect.timeout around that wait leaves nothing behind: once the holder's lease runs out, the key is taken over and reconciled", async () => {
    // On the controlled clock: the holder's 250 ms lease is live while the 40 ms timeout runs out,
    // and has run out after 300 ms more, however slow the machine.
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      await crashHolding(sim, store, "capture", true, 250, (instance) => instance.capture(input, { idempotencyKey: "held-2" }))
      const b = makePayClient(resolveConfig(clientOptions(sim, { store, reconcile: { settleMs: 60, pollIntervalMs: 5 } })))
      const waited = await timed(Effect.runPromise(Effect.either(b.capture(input, { idempotencyKey: "held-2" }).pipe(Effect.timeoutFail({ duration: "40 millis", onTimeout: () => "timed-out" as const })))))
      expect(waited.value._tag).toBe("Left")
      expect(waited.tookMs).toBe(40)
      await sleep(300)
      const r = await Effect.runPromise(Effect.either(b.capture(input, { idempotencyKey: "held-2", deadlineMs: 1500 })))
      await letLand(sim)
      expect(r._tag === "Right" ? (r.right as { type: string }).type : `${r.left._tag}: ${r.left.message}`).toBe("reconciled")
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })
})

describe("attack: a store whose methods fail", () => {
  it("recordIntent fails: StoreError with the key, nothing sent", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "sale")
      let sent = 0
      const pay = client(sim, { store: failing(store, "recordIntent"), fetch: (req) => { if (opOf(req) === "return") sent++; return sim.fetch(req) } })
      const r = await settled(pay.return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "1.00", currency: "USD" }, { idempotencyKey: "st-1" }))
      expect(r.ok ? "ok" : r.error._tag).toBe("StoreError")
      if (!r.ok) expect(r.error["idempotencyKey"]).toBe("st-1")
      expect(sent).toBe(0)
      await letLand(sim)
      expect(sim.order(o.orderid)!.returned).toBe("0.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })

  it("recordIntent fails once: the same key (and an identical keyless call) on the same client then runs, never hangs on the failed attempt", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "sale")
      let failures = 2
      const flaky: PayStoreService = {
        ...store,
        recordIntent: (intent, lease) => failures-- > 0 ? Effect.fail(new StoreError({ method: "recordIntent", adapter: "memory", reason: "connection refused" })) : store.recordIntent(intent, lease)
      }
      const pay = client(sim, { store: flaky })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "1.00", currency: "USD" }
      expect((await settled(pay.return(input, { idempotencyKey: "st-0" }))).ok).toBe(false)
      expect((await settled(pay.return({ ...input, amount: "2.00" }))).ok).toBe(false)
      const within = <A>(p: Promise<A>) => Promise.race([p, sleep(2000).then(() => "hung" as const)])
      const again = await within(settled(pay.return(input, { idempotencyKey: "st-0" })))
      expect(again === "hung" ? "hung" : again.ok).toBe(true)
      const keyless = await within(settled(pay.return({ ...input, amount: "2.00" })))
      expect(keyless === "hung" ? "hung" : keyless.ok).toBe(true)
      await letLand(sim)
      expect(sim.order(o.orderid)!.returned).toBe("3.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })

  it("recordBefore fails: StoreError, nothing sent; a later call with the key sends once", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "2.00", currency: "USD" }
      const r = await settled(client(sim, { store: failing(store, "recordBefore") }).capture(input, { idempotencyKey: "st-2" }))
      expect(r.ok ? "ok" : r.error._tag).toBe("StoreError")
      await letLand(sim)
      expect(moved(sim, o.orderid, "capture")).toBe(0)
      const again = await settled(client(sim, { store, intentLeaseMs: 50 }).capture(input, { idempotencyKey: "st-2" }))
      await letLand(sim)
      expect(again.ok ? "ok" : `${again.error._tag}: ${again.error.message}`).toBe("ok")
      expect(sim.order(o.orderid)!.captured).toBe("2.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })

  it("recordOutcome fails after the capture: the answer stands; the key on another client later reconciles, never captures twice", async () => {
    const sim = newSim()
    const store = await openMemoryStore()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "2.00", currency: "USD" }
      const first = await settled(client(sim, { store: failing(store, "recordOutcome"), intentLeaseMs: 50 }).capture(input, { idempotencyKey: "st-3" }))
      expect(first.ok).toBe(true)
      // The unrecorded call holds its key for its deadline plus its window (4000 + 120 ms), whatever intentLeaseMs says.
      await letLand(sim, 4000 + 120)
      const r = await settled(client(sim, { store }).capture(input, { idempotencyKey: "st-3" }))
      await letLand(sim)
      expect(r.ok ? String(r.value["type"]) : r.error._tag).toBe("reconciled")
      expect(sim.order(o.orderid)!.captured).toBe("2.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })
})
