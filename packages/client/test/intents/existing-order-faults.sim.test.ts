/**
 * Attack suite, calls on an existing order (capture, return, void, payout-pay):
 * faults at other moments than the fault matrix's, the merchant's own retries, signals and
 * deadlines, status unreachable while reconciling. Every answer is judged from the simulator's ledger.
 */
import { Effect } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { makePayClient, resolveConfig } from "../../src/index"
import { clientOptions } from "../support/sim"
import { afterProcessing, approvedOrder, client, letLand, moved, newSim, settled, sleep } from "../support/attacks"
import { startTestTime, testTimeoutSignal, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const undecodable = () => new Response("<html>oops</html>", { status: 200 })

describe("attack: returns on an uncaptured preauth (hold releases)", () => {
  it("a second partial return whose reply is lost is reconciled, not sent again (hold released once per call)", async () => {
    const sim = newSim()
    try {
      const wrapped = afterProcessing(sim, "return", "reset")
      const pay = client(sim, { fetch: wrapped.fetch })
      const o = await approvedOrder(client(sim), "preauth")
      // The first partial return goes through the clean path (a fresh client: the reply is not lost).
      await client(sim).return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" })
      await letLand(sim)
      expect(sim.order(o.orderid)!.holdReleased).toBe("3.00")
      const r = await settled(pay.return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }))
      await letLand(sim, 50)
      expect(sim.order(o.orderid)!.holdReleased).toBe("6.00")
      expect(moved(sim, o.orderid, "return")).toBe(2)
      expect(r.ok ? r.value["type"] : r.error._tag).toBe("reconciled")
    } finally {
      await sim.close()
    }
  })

  it("a first partial return on a preauth with an undecodable 200 is reconciled", async () => {
    const sim = newSim()
    try {
      const pay = client(sim, { fetch: afterProcessing(sim, "return", undecodable).fetch })
      const o = await approvedOrder(client(sim), "preauth")
      const r = await settled(pay.return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "2.00", currency: "USD" }))
      await letLand(sim, 50)
      expect(sim.order(o.orderid)!.holdReleased).toBe("2.00")
      expect(r.ok ? r.value["type"] : r.error._tag).toBe("reconciled")
    } finally {
      await sim.close()
    }
  })
})

describe("attack: status unreachable during reconciliation", () => {
  it("capture processed (reset after) while status answers 500: OutcomeUnknown(mayHaveApplied); the same key later reconciles, never captures twice", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const pay = client(sim, { fetch: afterProcessing(sim, "capture", "reset").fetch, deadlineMs: 600 })
      sim.faults.add({ operation: "STATUS", kind: "http-500", count: 1000 })
      let beforeRead = true
      // The first status read (the snapshot before sending) must succeed: let one through.
      sim.faults.clear()
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      const first = pay.capture(input, { idempotencyKey: "cap-su-1" })
      await sleep(1)
      if (beforeRead) sim.faults.add({ operation: "STATUS", kind: "http-500", count: 1000 })
      beforeRead = false
      const r1 = await settled(first)
      sim.faults.clear()
      await letLand(sim)
      expect(moved(sim, o.orderid, "capture")).toBe(1)
      if (!r1.ok) {
        expect(r1.error._tag).toBe("OutcomeUnknown")
        expect(r1.error["mayHaveApplied"]).toBe(true)
        expect(r1.error["idempotencyKey"]).toBe("cap-su-1")
      }
      const r2 = await settled(pay.capture(input, { idempotencyKey: "cap-su-1" }))
      await letLand(sim)
      expect(r2.ok ? r2.value["type"] : r2.error._tag).toBe("reconciled")
      expect(moved(sim, o.orderid, "capture")).toBe(1)
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
    } finally {
      await sim.close()
    }
  })

  it("capture never processed (500) while status is down: not claimed applied; the same key later sends it exactly once", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const status500 = { n: 0 }
      const pay = client(sim, {
        deadlineMs: 500,
        fetch: async (req) => {
          const url = new URL(req.url).pathname
          if (url.includes("/capture/") && status500.n === 0) {
            status500.n = 1
            return new Response(JSON.stringify({ type: "error", "error-code": "internal-error", "error-message": "boom", "serial-number": "x" }), { status: 500 })
          }
          if (url.includes("/status/") && status500.n === 1) return new Response("", { status: 503 })
          return sim.fetch(req)
        }
      })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      const r1 = await settled(pay.capture(input, { idempotencyKey: "cap-su-2" }))
      expect(moved(sim, o.orderid, "capture")).toBe(0)
      expect(r1.ok).toBe(false)
      if (!r1.ok) expect(r1.error._tag).toBe("OutcomeUnknown")
      status500.n = 2
      const r2 = await settled(pay.capture(input, { idempotencyKey: "cap-su-2" }))
      await letLand(sim)
      expect(r2.ok).toBe(true)
      expect(moved(sim, o.orderid, "capture")).toBe(1)
      expect(sim.order(o.orderid)!.captured).toBe("4.00")
    } finally {
      await sim.close()
    }
  })
})

describe("attack: partial captures and returns of equal amounts", () => {
  it("a second, deliberate 4.00 capture whose reply is lost is reconciled from the grown captured-amount (8.00 total, not 12.00)", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
      await client(sim).capture(input)
      await letLand(sim)
      const pay = client(sim, { fetch: afterProcessing(sim, "capture", "reset").fetch })
      const r = await settled(pay.capture(input))
      await letLand(sim, 20)
      expect(r.ok ? r.value["type"] : r.error._tag).toBe("reconciled")
      expect(sim.order(o.orderid)!.captured).toBe("8.00")
    } finally {
      await sim.close()
    }
  })

  for (const withKey of [true, false]) {
    it(`the same 5.00 refund called again after an OutcomeUnknown ${withKey ? "with its key" : "without a key"} is proven, not sent again (returned once)`, async () => {
      const sim = newSim()
      try {
        const o = await approvedOrder(client(sim), "sale")
        let failStatus = false
        const wrapped = afterProcessing(sim, "return", "reset")
        const pay = client(sim, {
          deadlineMs: 400,
          fetch: async (req) => {
            if (failStatus && new URL(req.url).pathname.includes("/status/")) return new Response("", { status: 502 })
            // Once the return has gone out, status is down for the rest of the call.
            if (new URL(req.url).pathname.includes("/return/")) failStatus = true
            return wrapped.fetch(req)
          }
        })
        const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "5.00", currency: "USD" }
        const r1 = await settled(pay.return(input))
        expect(r1.ok ? "ok" : r1.error._tag).toBe("OutcomeUnknown")
        if (!r1.ok) expect(r1.error["statusBefore"]).toMatchObject({ "returned-amount": "0.00" })
        failStatus = false
        const key = (r1.ok ? r1.value : r1.error)["idempotencyKey"] as string
        const r2 = await settled(pay.return(input, withKey ? { idempotencyKey: key } : {}))
        await letLand(sim)
        expect(sim.order(o.orderid)!.returned).toBe("5.00")
        expect(r2.ok ? r2.value["type"] : r2.error._tag).toBe("reconciled")
        if (r2.ok) expect(r2.value["idempotencyKey"]).toBe(key)
      } finally {
        await sim.close()
      }
    })
  }
})

describe("attack: signal and deadline", () => {
  it("a signal aborted before the call: Cancelled, nothing sent, key returned", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "sale")
      const wrapped = afterProcessing(sim, "none", "reset")
      const pay = client(sim, { fetch: wrapped.fetch })
      const ctrl = new AbortController()
      ctrl.abort()
      const r = await settled(pay.void({ client_orderid: o.client_orderid, orderid: o.orderid }, { signal: ctrl.signal }))
      expect(r.ok ? "ok" : r.error._tag).toBe("Cancelled")
      if (!r.ok) expect(typeof r.error["idempotencyKey"]).toBe("string")
      expect(wrapped.count("void")).toBe(0)
      await letLand(sim)
      expect(moved(sim, o.orderid, "void")).toBe(0)
      // Cancelled proves nothing moved: the same call now sends.
      expect((await pay.void({ client_orderid: o.client_orderid, orderid: o.orderid }))["type"]).toBeDefined()
      await letLand(sim)
      expect(moved(sim, o.orderid, "void")).toBe(1)
    } finally {
      await sim.close()
    }
  })

  it("a signal fired while the gateway holds a return: OutcomeUnknown(mayHaveApplied), then the same key proves it once it lands", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "sale")
      const pay = client(sim)
      sim.faults.add({ operation: "RETURN", kind: "latency", latencyMs: 150, count: 1 })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "5.00", currency: "USD" }
      const r1 = await settled(pay.return(input, { signal: testTimeoutSignal(30), idempotencyKey: "ret-sig" }))
      expect(r1.ok ? "ok" : r1.error._tag).toBe("OutcomeUnknown")
      if (!r1.ok) expect(r1.error["mayHaveApplied"]).toBe(true)
      const r2 = await settled(pay.return(input, { idempotencyKey: "ret-sig" }))
      await letLand(sim, 200)
      expect(r2.ok ? r2.value["type"] : r2.error._tag).toBe("reconciled")
      expect(sim.order(o.orderid)!.returned).toBe("5.00")
      expect(moved(sim, o.orderid, "return")).toBe(1)
    } finally {
      await sim.close()
    }
  })

  it("a signal aborted after the call resolved changes nothing", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const pay = client(sim)
      const ctrl = new AbortController()
      const r = await pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "1.00", currency: "USD" }, { signal: ctrl.signal })
      ctrl.abort()
      await sleep(5)
      expect(r["type"]).toBe("async-response")
      await letLand(sim)
      expect(sim.order(o.orderid)!.captured).toBe("1.00")
    } finally {
      await sim.close()
    }
  })

  it("deadlineMs shorter than one attempt bounds the whole call, reconciling status included", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const pay = client(sim, { timeoutMs: 1000, retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 } })
      // The capture is held by the gateway; every status lookup after it is slow too.
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "2.00", currency: "USD" }
      const before = await pay.status({ client_orderid: o.client_orderid, orderid: o.orderid })
      expect(before.status).toBe("approved")
      sim.faults.add({ operation: "CAPTURE", kind: "latency", latencyMs: 400, count: 1 })
      const started = Date.now()
      const call = settled(pay.capture(input, { deadlineMs: 80 }))
      await sleep(5)
      sim.faults.add({ operation: "STATUS", kind: "latency", latencyMs: 400, count: 100 })
      const r = await call
      const took = Date.now() - started
      sim.faults.clear()
      await letLand(sim, 450)
      expect(r.ok ? "ok" : r.error._tag).toBe("OutcomeUnknown")
      if (!r.ok) expect(r.error["mayHaveApplied"]).toBe(true)
      expect(took).toBeLessThan(300)
      expect(moved(sim, o.orderid, "capture")).toBe(1)
    } finally {
      await sim.close()
    }
  })

  it("deadlineMs shorter than one attempt on a sale (order-creating): OutcomeUnknown within the deadline, never a bare Timeout", async () => {
    const sim = newSim()
    try {
      const pay = client(sim, { timeoutMs: 1000, retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 } })
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 300, count: 1 })
      sim.faults.add({ operation: "STATUS", kind: "latency", latencyMs: 300, count: 100 })
      const { saleInput } = await import("../support/fixtures")
      const input = saleInput()
      const started = Date.now()
      const r = await settled(pay.sale(input, { deadlineMs: 60 }))
      const took = Date.now() - started
      sim.faults.clear()
      await letLand(sim, 350)
      expect(r.ok ? "ok" : r.error._tag).toBe("OutcomeUnknown")
      expect(took).toBeLessThan(300)
      expect(sim.orders().filter((x) => x.client_orderid === input.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })

  it("Effect.timeout around a capture after the bytes left: the same key reconciles, never sends again", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const service = makePayClient(resolveConfig(clientOptions(sim, { timeoutMs: 1000, reconcile: { settleMs: 100, pollIntervalMs: 10 } })))
      sim.faults.add({ operation: "CAPTURE", kind: "latency", latencyMs: 100, count: 1 })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }
      const timedOut = await Effect.runPromise(Effect.either(service.capture(input, { idempotencyKey: "cap-to" }).pipe(Effect.timeout("30 millis"))))
      expect(timedOut._tag).toBe("Left")
      const again = await Effect.runPromise(Effect.either(service.capture(input, { idempotencyKey: "cap-to" })))
      await letLand(sim, 150)
      expect(again._tag === "Right" ? (again.right as { type: string }).type : again.left._tag).toBe("reconciled")
      expect(sim.order(o.orderid)!.captured).toBe("3.00")
    } finally {
      await sim.close()
    }
  })
})

describe("attack: concurrency on one client", () => {
  it("three identical voids at once (a triple click) send once", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "sale")
      const wrapped = afterProcessing(sim, "none", "reset")
      const pay = client(sim, { fetch: wrapped.fetch })
      const input = { client_orderid: o.client_orderid, orderid: o.orderid }
      const rs = await Promise.all([settled(pay.void(input)), settled(pay.void(input)), settled(pay.void(input))])
      await letLand(sim)
      expect(wrapped.count("void")).toBe(1)
      expect(moved(sim, o.orderid, "void")).toBe(1)
      expect(rs.every((r) => r.ok)).toBe(true)
    } finally {
      await sim.close()
    }
  })

  it("the same key with a different amount is refused before anything is sent", async () => {
    const sim = newSim()
    try {
      const o = await approvedOrder(client(sim), "preauth")
      const pay = client(sim)
      await pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "1.00", currency: "USD" }, { idempotencyKey: "k-amt" })
      const r = await settled(pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "2.00", currency: "USD" }, { idempotencyKey: "k-amt" }))
      expect(r.ok ? "ok" : `${r.error._tag}:${String(r.error["field"])}`).toBe("InputError:idempotencyKey")
      await letLand(sim)
      expect(sim.order(o.orderid)!.captured).toBe("1.00")
    } finally {
      await sim.close()
    }
  })

  it("payoutPay whose 200 is undecodable is reconciled; the same key replays", async () => {
    const sim = newSim()
    try {
      const clean = client(sim)
      const checked = await clean.payoutCheck({ client_orderid: "pp-adv-1", amount: "5.00", currency: "USD", credit_card_number: "4111111111111111", card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030" })
      const orderid = checked["paynet-order-id"]!
      const pay = client(sim, { fetch: afterProcessing(sim, "payout-pay", undecodable).fetch })
      const r1 = await settled(pay.payoutPay({ client_orderid: "pp-adv-1", orderid }, { idempotencyKey: "pp-k" }))
      const r2 = await settled(pay.payoutPay({ client_orderid: "pp-adv-1", orderid }, { idempotencyKey: "pp-k" }))
      await letLand(sim)
      expect(r1.ok ? r1.value["type"] : r1.error._tag).toBe("reconciled")
      expect(r2).toEqual(r1)
      expect(sim.order(orderid)!.paidOut).toBe("5.00")
    } finally {
      await sim.close()
    }
  })
})
