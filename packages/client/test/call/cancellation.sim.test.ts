/**
 * Attack suite, cancellation through the Effect API and the Promise facade:
 * interruption before anything was sent, interruption while the gateway holds the request, and a
 * caller that joined another call's send (a double click) whose own signal or deadline ends first.
 */
import { Effect, Fiber } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { makePayClient, resolveConfig } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { clientOptions } from "../support/sim"
import { approvedOrder, client, letLand, moved, newSim, opOf, settled, sleep } from "../support/attacks"
import { startTestTime, testTimeoutSignal, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

describe("attack: Effect interruption", () => {
  it("interrupted while reading the order before a capture (nothing sent): Cancelled; the same key then sends once", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let slowStatus = true
      let captures = 0
      const service = makePayClient(resolveConfig(clientOptions(sim, {
        fetch: async (req) => {
          if (opOf(req) === "status" && slowStatus) await sleep(100)
          if (opOf(req) === "capture") captures++
          return sim.fetch(req)
        }
      })))
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      const r = await Effect.runPromise(Effect.either(service.capture(input, { idempotencyKey: "eff-1" }).pipe(Effect.timeoutFail({ duration: "20 millis", onTimeout: () => "timed-out" as const }))))
      expect(r._tag).toBe("Left")
      await sleep(120)
      expect(captures).toBe(0)
      slowStatus = false
      const again = await Effect.runPromise(Effect.either(service.capture(input, { idempotencyKey: "eff-1" })))
      await letLand(sim)
      expect(again._tag).toBe("Right")
      expect(captures).toBe(1)
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
    } finally {
      await sim.close()
    }
  })

  it("a sale interrupted while the gateway holds it: the same key reconciles to the one order", async () => {
    const sim = newSim()
    try {
      const service = makePayClient(resolveConfig(clientOptions(sim, { timeoutMs: 1000 })))
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 80, count: 1 })
      const input = saleInput()
      const fiber = Effect.runFork(service.sale(input, { idempotencyKey: "eff-2" }))
      await sleep(20)
      await Effect.runPromise(Fiber.interrupt(fiber))
      const again = await Effect.runPromise(Effect.either(service.sale(input, { idempotencyKey: "eff-2" })))
      await letLand(sim, 100)
      // A resend under the same client_orderid is deduped by the gateway: any truthful answer, one order.
      expect(again._tag === "Right" ? (again.right as { type: string }).type : again.left._tag).toMatch(/^(reconciled|async-response|OutcomeUnknown)$/)
      expect(sim.orders().filter((x) => x.client_orderid === input.client_orderid)).toHaveLength(1)
      if (again._tag === "Left") {
        const third = await Effect.runPromise(Effect.either(service.sale(input, { idempotencyKey: "eff-2" })))
        expect(third._tag === "Right" ? (third.right as { type: string }).type : third.left._tag).toMatch(/^(reconciled|async-response)$/)
      }
      expect(sim.orders().filter((x) => x.client_orderid === input.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })
})

describe("attack: a joined call's own signal and deadline", () => {
  for (const how of ["signal", "deadline"] as const) {
    it(`a double click whose second call's ${how} ends first answers at once (not after the first call), and sends nothing`, async () => {
      const sim = newSim()
      try {
        const o = await approvedOrder(client(sim), "preauth")
        let captures = 0
        const pay = client(sim, {
          timeoutMs: 2000,
          fetch: async (req) => {
            if (opOf(req) === "capture") {
              captures++
              await sleep(400)
            }
            return sim.fetch(req)
          }
        })
        const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
        const first = settled(pay.capture(input))
        await sleep(20)
        const started = Date.now()
        const second = await settled(pay.capture(input, how === "signal" ? { signal: testTimeoutSignal(30) } : { deadlineMs: 30 }))
        const took = Date.now() - started
        const r1 = await first
        await letLand(sim)
        expect(took).toBeLessThan(250)
        expect(second.ok ? "ok" : second.error._tag).toBe("OutcomeUnknown")
        if (!second.ok) {
          expect(second.error["mayHaveApplied"]).toBe(true)
          expect(typeof second.error["idempotencyKey"]).toBe("string")
        }
        expect(r1.ok).toBe(true)
        expect(captures).toBe(1)
        expect(moved(sim, o.orderid, "capture")).toBe(1)
      } finally {
        await sim.close()
      }
    })
  }
})

describe("attack: per-call options that break their rule", () => {
  const bad: Array<[string, Record<string, unknown>]> = [
    ["deadlineMs", { deadlineMs: Number.NaN }],
    ["deadlineMs", { deadlineMs: -1 }],
    ["timeoutMs", { timeoutMs: 0 }],
    ["timeoutMs", { timeoutMs: Number.NaN }],
    ["idempotencyKey", { idempotencyKey: "" }],
    ["idempotencyKey", { idempotencyKey: "k".repeat(256) }],
    ["idempotencyKey", { idempotencyKey: 42 }],
    ["signal", { signal: { aborted: false } }],
    ["retry.maxRetries", { retry: { maxRetries: -1 } }],
    ["reconcile.settleMs", { reconcile: { settleMs: Number.NaN } }]
  ]
  it("each is an InputError naming the option (with a usable key), and nothing is sent", async () => {
    const sim = newSim()
    try {
      let sent = 0
      const pay = client(sim, { fetch: (req) => { sent++; return sim.fetch(req) } })
      for (const [field, opts] of bad) {
        const r = await settled(pay.sale(saleInput(), opts as never))
        expect(r.ok ? "ok" : `${r.error._tag}:${String(r.error["field"])}`, JSON.stringify(opts)).toBe(`InputError:${field}`)
        if (!r.ok) expect(String(r.error["idempotencyKey"])).toMatch(/^[0-9a-f-]{36}$/)
        const read = await settled(pay.status({ client_orderid: "x" }, opts as never))
        expect(read.ok ? "ok" : `${read.error._tag}:${String(read.error["field"])}`).toBe(`InputError:${field}`)
      }
      expect(sent).toBe(0)
      // Usable ones still work.
      expect((await pay.sale(saleInput(), { deadlineMs: 5000, timeoutMs: 1000, idempotencyKey: "k".repeat(255), retry: { maxRetries: 0 } }))["type"]).toBe("async-response")
    } finally {
      await sim.close()
    }
  })
})

describe("attack: a signal that fires while the order is read before a capture", () => {
  it("answers Cancelled at once (not after the slow read), and nothing is sent", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      let captures = 0
      const pay = client(sim, {
        timeoutMs: 2000,
        fetch: async (req) => {
          if (opOf(req) === "status") await sleep(400)
          if (opOf(req) === "capture") captures++
          return sim.fetch(req)
        }
      })
      const started = Date.now()
      const r = await settled(pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "1.00", currency: "USD" }, { signal: testTimeoutSignal(20) }))
      const took = Date.now() - started
      expect(r.ok ? "ok" : `${r.error._tag}:${String(r.error["reason"])}`).toBe("Cancelled:signal")
      expect(took).toBeLessThan(250)
      await sleep(450)
      expect(captures).toBe(0)
    } finally {
      await sim.close()
    }
  })
})
