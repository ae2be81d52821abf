/**
 * Attack suite: the fiber-free first attempt and its hand-over to
 * the Effect pipeline. Faults on attempt 1 of order-creating calls through the Effect API (whose
 * first attempt also runs without a fiber when no tracer is installed), interruption while the
 * attempt runs and while its continuation reconciles, double clicks and key reuse on the fast path,
 * and the Promise facade and the Effect API mixed on one client. Judged from the simulator's ledger.
 */
import { Effect, Fiber } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { makePayClientParts } from "../../src/client"
import { resolveConfig } from "../../src/index"
import { coid, saleInput } from "../support/fixtures"
import { clientOptions } from "../support/sim"
import { newSim, opOf, settled, sleep } from "../support/attacks"
import type { Simulator } from "@paykit/testkit"
import { startTestTime, testTimeoutSignal, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

type Wrap = (req: Request, sim: Simulator) => Promise<Response> | undefined

/** One client's Effect service and Promise path over one pipeline (one ledger), with a fetch hook. */
function parts(sim: Simulator, hook: Wrap = () => undefined, extra: Record<string, unknown> = {}) {
  const sent: Array<string> = []
  const fetch = (req: Request) => {
    sent.push(opOf(req))
    return hook(req, sim) ?? sim.fetch(req)
  }
  const { service, pipeline } = makePayClientParts(resolveConfig(clientOptions(sim, {
    fetch,
    timeoutMs: 300,
    deadlineMs: 3000,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 4 },
    reconcile: { settleMs: 120, pollIntervalMs: 10 },
    ...extra
  })))
  return { service, pipeline, sent, count: (op: string) => sent.filter((s) => s === op).length }
}

const ordersOf = (sim: Simulator, client_orderid: string) => sim.orders().filter((o) => o.client_orderid === client_orderid)
const either = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const answer = (r: { _tag: "Left"; left: { _tag: string } } | { _tag: "Right"; right: unknown }) =>
  r._tag === "Right" ? String((r.right as { type?: unknown }).type) : r.left._tag

const payoutInput = () => ({ client_orderid: coid("po2"), amount: "5.00", currency: "USD", credit_card_number: "4111111111111111", card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030" })
const transferInput = () => ({ client_orderid: coid("tr2"), amount: "1.00", currency: "USD", order_desc: "t", ipaddress: "127.0.0.1", redirect_url: "https://shop.example.com/r", credit_card_number: "4111111111111111", cvv2: "123", expire_month: "12", expire_year: "2030", card_printed_name: "JOHN DOE", "destination-card-no": "5555555555554444" })

const CREATING = {
  sale: { segment: "sale", input: () => saleInput() as Record<string, string> },
  preauth: { segment: "preauth", input: () => saleInput() as Record<string, string> },
  payout: { segment: "payout", input: payoutInput as () => Record<string, string> },
  transfer: { segment: "transfer", input: transferInput as () => Record<string, string> }
} as const

/** A reply replaced after the simulator processed the request (or the connection dropped). */
const afterProcessed = (reply: "reset" | (() => Response)) => async (req: Request, sim: Simulator) => {
  const r = await sim.fetch(req)
  if (reply === "reset") throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) })
  void r
  return reply()
}

const FAULTS: Record<string, (sim: Simulator, op: string) => Wrap> = {
  "reset after processing": (_s, op) => { let armed = true; return (req, sim) => (armed && opOf(req) === op ? ((armed = false), afterProcessed("reset")(req, sim)) : undefined) },
  "500 after processing": (_s, op) => { let armed = true; return (req, sim) => (armed && opOf(req) === op ? ((armed = false), afterProcessed(() => new Response("", { status: 500 }))(req, sim)) : undefined) },
  "undecodable 200": (_s, op) => { let armed = true; return (req, sim) => (armed && opOf(req) === op ? ((armed = false), afterProcessed(() => new Response("<html/>", { status: 200 }))(req, sim)) : undefined) },
  "503 before processing": (_s, op) => { let armed = true; return (req) => (armed && opOf(req) === op ? ((armed = false), Promise.resolve(new Response("", { status: 503 }))) : undefined) },
  "reset before processing": (_s, op) => { let armed = true; return (req) => (armed && opOf(req) === op ? ((armed = false), Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }))) : undefined) }
}

describe("attack: faults on attempt 1 through the Effect API (fiber-free first attempt)", () => {
  for (const [method, op] of Object.entries(CREATING)) {
    for (const [fault, make] of Object.entries(FAULTS)) {
      it(`${method}, ${fault}: one order, a true answer; the same key then replays without sending`, async () => {
        const sim = newSim()
        try {
          const c = parts(sim, make(sim, op.segment))
          const input = op.input()
          const call = (c.service as unknown as Record<string, (i: unknown, o?: unknown) => Effect.Effect<unknown, { _tag: string }>>)[method]!
          const r = await either(call(input, { idempotencyKey: `k-${method}` }))
          await sim.clock.advance(60_000)
          const orders = ordersOf(sim, input["client_orderid"]!)
          expect(orders).toHaveLength(1)
          // Never a bare transport error after attempt 1 may have landed.
          expect(answer(r)).toMatch(/^(async-response|reconciled|OutcomeUnknown)$/)
          if (r._tag === "Left") expect((r.left as unknown as { mayHaveApplied: boolean }).mayHaveApplied).toBe(true)
          const sentBefore = c.count(op.segment)
          const again = await either(call(input, { idempotencyKey: `k-${method}` }))
          expect(answer(again)).toMatch(/^(async-response|reconciled)$/)
          if (r._tag === "Right") expect(c.count(op.segment)).toBe(sentBefore)
          expect(ordersOf(sim, input["client_orderid"]!)).toHaveLength(1)
        } finally {
          await sim.close()
        }
      })
    }
  }
})

describe("attack: Effect interruption around the fast path", () => {
  it("Effect.timeout while attempt 1 is held by the gateway: the same key then reconciles to the one order; nothing stays 'running'", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 80, count: 1 })
      const input = saleInput()
      const r = await either(c.service.sale(input, { idempotencyKey: "int-1" }).pipe(Effect.timeout("20 millis")))
      expect(r._tag).toBe("Left")
      expect((r as { left: { _tag: string } }).left._tag).toBe("TimeoutException")
      await sleep(100)
      const again = await either(c.service.sale(input, { idempotencyKey: "int-1" }))
      expect(answer(again)).toBe("reconciled")
      expect(ordersOf(sim, input.client_orderid)).toHaveLength(1)
      // An identical keyless call is a new deliberate one once the key succeeded: the gateway dedupes it.
      const third = await either(c.service.sale(input, { idempotencyKey: "int-1" }))
      expect(answer(third)).toBe("reconciled")
      expect(c.count("sale")).toBe(1)
    } finally {
      await sim.close()
    }
  })

  it("interrupted while the continuation reconciles (attempt 1 answered 500 after processing, status slow): the same key finds the order, one charge", async () => {
    const sim = newSim()
    try {
      let slowStatus = true
      const c = parts(sim, (req, s) => {
        if (opOf(req) === "sale" && c.count("sale") === 1) return afterProcessed(() => new Response("", { status: 500 }))(req, s)
        if (opOf(req) === "status" && slowStatus) return sleep(100).then(() => s.fetch(req))
        return undefined
      })
      const input = saleInput()
      const fiber = Effect.runFork(c.service.sale(input, { idempotencyKey: "int-2" }))
      await sleep(30)
      const exit = await Effect.runPromise(Fiber.interrupt(fiber))
      expect(exit._tag).toBe("Failure")
      slowStatus = false
      await sleep(120)
      const again = await either(c.service.sale(input, { idempotencyKey: "int-2" }))
      expect(answer(again)).toBe("reconciled")
      // A keyless identical call while nothing is open: the gateway dedupes by client_orderid.
      expect(ordersOf(sim, input.client_orderid)).toHaveLength(1)
      expect(c.count("sale")).toBe(1)
    } finally {
      await sim.close()
    }
  })

  it("interrupted while attempt 1 is held, keyless: an identical keyless call resumes (reconciles) instead of sending", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 60, count: 1 })
      const input = saleInput()
      const fiber = Effect.runFork(c.service.sale(input))
      await sleep(15)
      await Effect.runPromise(Fiber.interrupt(fiber))
      await sleep(80)
      const again = await either(c.service.sale(input))
      expect(answer(again)).toBe("reconciled")
      expect(c.count("sale")).toBe(1)
      expect(ordersOf(sim, input.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })
})

describe("attack: double clicks, replays and key reuse on the fast path", () => {
  it("two identical keyless sales at once, the first's reply lost after processing: one send, both answers agree", async () => {
    const sim = newSim()
    try {
      const c = parts(sim, (req, s) => (opOf(req) === "sale" && c.count("sale") === 1 ? afterProcessed("reset")(req, s) : undefined))
      const input = saleInput()
      const [a, b] = await Promise.all([settled(c.pipeline.callPromise("SALE", input)), settled(c.pipeline.callPromise("SALE", input))])
      expect(c.count("sale")).toBe(1)
      expect(a.ok && b.ok).toBe(true)
      expect(a.ok && a.value["type"]).toBe("reconciled")
      expect(b.ok && b.value["idempotencyKey"]).toBe(a.ok && a.value["idempotencyKey"])
      expect(ordersOf(sim, input.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })

  it("Promise facade and Effect API on one client: a Promise sale held by the gateway, the Effect call with its key joins it (one send)", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 40, count: 1 })
      const input = saleInput()
      const p = settled(c.pipeline.callPromise("SALE", input, { idempotencyKey: "mix-1" }))
      await sleep(5)
      const e = await either(c.service.sale(input, { idempotencyKey: "mix-1" }))
      const pr = await p
      expect(c.count("sale")).toBe(1)
      expect(pr.ok).toBe(true)
      expect(answer(e)).toBe("async-response")
      expect((e as { right: Record<string, unknown> }).right["paynet-order-id"]).toBe(pr.ok && pr.value["paynet-order-id"])
    } finally {
      await sim.close()
    }
  })

  it("a key reused for a different sale while the first is in flight on the fast path: InputError, nothing sent", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 30, count: 1 })
      const first = saleInput()
      const p = settled(c.pipeline.callPromise("SALE", first, { idempotencyKey: "reuse-1" }))
      await sleep(2)
      const other = await settled(c.pipeline.callPromise("SALE", { ...first, amount: "99.00" }, { idempotencyKey: "reuse-1" }))
      expect(!other.ok && other.error._tag).toBe("InputError")
      expect(!other.ok && other.error["field"]).toBe("idempotencyKey")
      expect((await p).ok).toBe(true)
      expect(c.count("sale")).toBe(1)
      const afterDone = await settled(c.pipeline.callPromise("SALE", { ...first, amount: "99.00" }, { idempotencyKey: "reuse-1" }))
      expect(!afterDone.ok && afterDone.error._tag).toBe("InputError")
      expect(c.count("sale")).toBe(1)
    } finally {
      await sim.close()
    }
  })

  it("a replay of a key that succeeded on the fast path sends nothing and answers what the first call answered", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      const input = saleInput()
      const first = (await c.pipeline.callPromise("SALE", input, { idempotencyKey: "rp-1" })) as Record<string, unknown>
      const snapshot = { ...first }
      const replay = (await c.pipeline.callPromise("SALE", input, { idempotencyKey: "rp-1" })) as Record<string, unknown>
      const viaEffect = await either(c.service.sale(input, { idempotencyKey: "rp-1" }))
      expect(c.count("sale")).toBe(1)
      expect(replay).toEqual(snapshot)
      expect((viaEffect as { right: unknown }).right).toEqual(snapshot)
    } finally {
      await sim.close()
    }
  })

  it("a merchant's edit of its result never changes what the key replays (a replay handed out the very object the first caller got)", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      const input = saleInput()
      const first = (await c.pipeline.callPromise("SALE", input, { idempotencyKey: "rp-2" })) as Record<string, unknown>
      const original = first["status"]
      // The merchant's code annotates its own copy of the answer (a common pattern).
      first["status"] = "merchant-edited"
      const replay = (await c.pipeline.callPromise("SALE", input, { idempotencyKey: "rp-2" })) as Record<string, unknown>
      expect(replay["status"]).not.toBe("merchant-edited")
      // Nor does an edit of a replay reach the next one.
      replay["status"] = "edited-again"
      const third = (await c.pipeline.callPromise("SALE", input, { idempotencyKey: "rp-2" })) as Record<string, unknown>
      expect(third["status"]).toBe(original)
    } finally {
      await sim.close()
    }
  })

  it("a signal that fires while attempt 1 is held, then awaitFinal and the identical keyless call: one order, the call reconciles", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 60, count: 1 })
      const input = saleInput()
      const r = await settled(c.pipeline.callPromise("SALE", input, { signal: testTimeoutSignal(10) }))
      expect(!r.ok && r.error._tag).toBe("OutcomeUnknown")
      expect(!r.ok && r.error["mayHaveApplied"]).toBe(true)
      await sleep(80)
      const again = await settled(c.pipeline.callPromise("SALE", input))
      expect(again.ok && again.value["type"]).toBe("reconciled")
      expect(again.ok && again.value["idempotencyKey"]).toBe(!r.ok && r.error["idempotencyKey"])
      expect(c.count("sale")).toBe(1)
      expect(ordersOf(sim, input.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })

  it("deadlineMs shorter than attempt 1 through the Effect API: OutcomeUnknown within the deadline, then the same key proves the one order", async () => {
    const sim = newSim()
    try {
      const c = parts(sim)
      // The reply is held 1.5 s: an answer well before that (the bound leaves room for a loaded CI
      // machine, where 40 ms of deadline took up to 167 ms) came from the deadline, not the reply.
      sim.faults.add({ operation: "SALE", kind: "latency", latencyMs: 1500, count: 1 })
      const input = saleInput()
      const t0 = Date.now()
      const r = await either(c.service.sale(input, { idempotencyKey: "dl-1", deadlineMs: 40 }))
      expect(Date.now() - t0).toBeLessThan(750)
      expect(answer(r)).toBe("OutcomeUnknown")
      await sleep(1600)
      const again = await either(c.service.sale(input, { idempotencyKey: "dl-1" }))
      expect(answer(again)).toBe("reconciled")
      expect(c.count("sale")).toBe(1)
      expect(ordersOf(sim, input.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })
})
