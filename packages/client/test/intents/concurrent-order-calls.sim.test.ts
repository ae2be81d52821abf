/**
 * Attack suite: two different money calls of one client on the
 * same order at once. Each proves its outcome by comparing the order before and after its send; a
 * comparison that overlaps the other call's send sees the other call's money and took it for its
 * own (a 500 never processed answered `reconciled`). Judged from the simulator's ledger.
 */
import { beforeEach, describe, expect, it } from "vitest"
import { approvedOrder, client, letLand, moved, newSim, opOf, settled, sleep } from "../support/attacks"
import { startTestTime, testTimeoutSignal, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

describe("attack: two different captures of one client on one order at once", () => {
  it("capture A (3.00, reply lost after processing) beside capture B (3.00, 500 before processing): B is never 'reconciled' while only A's 3.00 moved", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let captures = 0
      const pay = client(sim, {
        fetch: async (req) => {
          if (opOf(req) !== "capture") return sim.fetch(req)
          const n = ++captures
          if (n === 1) {
            await sim.fetch(req)
            throw new TypeError("fetch failed", { cause: Object.assign(new Error("hang up"), { code: "ECONNRESET" }) })
          }
          if (n === 2) return new Response("", { status: 500 })
          return sim.fetch(req)
        }
      })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }
      const [a, b] = await Promise.all([
        settled(pay.capture(input, { idempotencyKey: "A" })),
        settled(pay.capture(input, { idempotencyKey: "B" }))
      ])
      await letLand(sim, 20)
      const captured = sim.order(o.orderid)!.captured
      const claimedApplied = [a, b].filter((r) => r.ok).length
      // Every answer that claims the capture moved money must be backed by one capture on the ledger.
      expect(`${claimedApplied} answered applied, ${moved(sim, o.orderid, "capture")} captures (${captured})`).toBe(
        `${moved(sim, o.orderid, "capture")} answered applied, ${moved(sim, o.orderid, "capture")} captures (${captured})`
      )
      expect(sim.checkInvariants()).toEqual([])
    } finally {
      await sim.close()
    }
  })

  it("capture A (3.00) and return-free capture B (4.00), both replies lost after processing: each reconciled to its own amount, 7.00 captured", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const pay = client(sim, {
        fetch: async (req) => {
          if (opOf(req) !== "capture") return sim.fetch(req)
          await sim.fetch(req)
          throw new TypeError("fetch failed", { cause: Object.assign(new Error("hang up"), { code: "ECONNRESET" }) })
        }
      })
      const base = { client_orderid: o.client_orderid, orderid: o.orderid, currency: "USD" }
      const [a, b] = await Promise.all([
        settled(pay.capture({ ...base, amount: "3.00" }, { idempotencyKey: "A3" })),
        settled(pay.capture({ ...base, amount: "4.00" }, { idempotencyKey: "B4" }))
      ])
      await letLand(sim, 20)
      expect(sim.order(o.orderid)!.captured).toBe("7.00")
      expect([a.ok ? a.value["type"] : a.error._tag, b.ok ? b.value["type"] : b.error._tag]).toEqual(["reconciled", "reconciled"])
    } finally {
      await sim.close()
    }
  })

  it("a call waiting for its order ends with its own deadline or signal (Cancelled, nothing sent); the order is free again afterwards", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let captures = 0
      const pay = client(sim, {
        fetch: (req) => {
          if (opOf(req) === "capture") captures++
          return sim.fetch(req)
        }
      })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "2.00", currency: "USD" }
      // The first capture is held 1.5 s, so the waiters' bound (far below it, with room for a loaded
      // CI machine) shows they ended by their own deadline and signal, not when the order freed.
      sim.faults.add({ operation: "CAPTURE", kind: "latency", latencyMs: 1500, count: 1 })
      const first = settled(pay.capture(input, { idempotencyKey: "L1" }))
      await new Promise((r) => setTimeout(r, 20))
      const t0 = Date.now()
      const byDeadline = await settled(pay.capture(input, { idempotencyKey: "L2", deadlineMs: 30 }))
      const bySignal = await settled(pay.capture(input, { idempotencyKey: "L3", signal: testTimeoutSignal(20) }))
      expect(Date.now() - t0).toBeLessThan(700)
      expect([byDeadline, bySignal].map((r) => (r.ok ? "ok" : `${r.error._tag}:${String(r.error["reason"])}`))).toEqual(["Cancelled:deadline", "Cancelled:signal"])
      expect((await first).ok).toBe(true)
      expect(captures).toBe(1)
      const later = await settled(pay.capture(input, { idempotencyKey: "L2" }))
      expect(later.ok).toBe(true)
      expect(captures).toBe(2)
      await letLand(sim)
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
    } finally {
      await sim.close()
    }
  })

  it("capture A (3.00) ends OutcomeUnknown without landing; capture B (3.00, another shipment) then succeeds; A's same-key retry is never 'reconciled' from B's money", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let statusDown = false
      let captures = 0
      const pay = client(sim, {
        deadlineMs: 400,
        fetch: async (req) => {
          const op = opOf(req)
          if (op === "status" && statusDown) return new Response("", { status: 503 })
          if (op === "capture" && ++captures === 1) {
            // A: answered 500 without processing, and status goes down while A reconciles.
            statusDown = true
            return new Response("", { status: 500 })
          }
          return sim.fetch(req)
        }
      })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }
      const a = await settled(pay.capture(input, { idempotencyKey: "ship-1" }))
      expect(!a.ok && a.error._tag).toBe("OutcomeUnknown")
      statusDown = false
      const b = await settled(pay.capture(input, { idempotencyKey: "ship-2" }))
      expect(b.ok).toBe(true)
      await letLand(sim)
      expect(sim.order(o.orderid)!.captured).toBe("3.00")
      const again = await settled(pay.capture(input, { idempotencyKey: "ship-1" }))
      await letLand(sim)
      const captured = sim.order(o.orderid)!.captured
      // Either A is proven (it was sent now: 6.00 captured) or the answer says it cannot tell; never "reconciled" at 3.00.
      expect(`${again.ok ? String(again.value["type"]) : again.error._tag} at ${captured}`).toMatch(/^(async-response at 6\.00|OutcomeUnknown at 3\.00)$/)
    } finally {
      await sim.close()
    }
  })

  it("capture A (3.00) given up at its deadline while the gateway still holds it; capture B (3.00) answered 500 unprocessed meanwhile: B is never 'reconciled' from A's late 3.00", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let captures = 0
      const pay = client(sim, {
        reconcile: { settleMs: 60, pollIntervalMs: 5 },
        fetch: async (req) => {
          if (opOf(req) !== "capture") return sim.fetch(req)
          const n = ++captures
          if (n === 1) {
            // A: the gateway holds it (ignoring the client's abort) and processes it late.
            const copy = new Request(req.url, { method: "POST", headers: req.headers, body: await req.text() })
            await sleep(80)
            return sim.fetch(copy)
          }
          if (n === 2) return new Response("", { status: 500 })
          return sim.fetch(req)
        }
      })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }
      const a = await settled(pay.capture(input, { idempotencyKey: "late-A", deadlineMs: 40 }))
      expect(!a.ok && a.error._tag).toBe("OutcomeUnknown")
      const b = await settled(pay.capture(input, { idempotencyKey: "late-B", deadlineMs: 1000 }))
      await sleep(150)
      await letLand(sim)
      const captured = sim.order(o.orderid)!.captured
      const bAnswer = b.ok ? String(b.value["type"]) : b.error._tag
      // B's own send never landed: it is either sent again (6.00 with A's) or unknown, never "reconciled" at 3.00.
      expect(`${bAnswer} at ${captured}`).not.toBe("reconciled at 3.00")
    } finally {
      await sim.close()
    }
  })
})
