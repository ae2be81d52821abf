/**
 * Attack suite: faults at every moment of a call, not one per call. Each attempt
 * of a money-moving call meets its own fault (500, reset before or after processing, held past the
 * timeout, refused, undecodable 200, 429) in a seeded random sequence; the status lookups may fail
 * too. After everything the gateway held has landed, the simulator's order decides: no money moved
 * twice, and no answer claims what the order contradicts (success with nothing moved, "not applied"
 * with something moved, a bare transport error after an unknown outcome).
 */
import fc from "fast-check"
import type { Simulator } from "@paykit/testkit"
import { beforeEach, describe, expect, it } from "vitest"
import { saleInput } from "../support/fixtures"
import { approvedOrder, client, letLand, moved, newSim, opOf, settled, sleep, type Settled } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const FAULTS = ["ok", "500", "reset-before", "reset-after", "held", "refused", "undecodable", "429"] as const
type Fault = (typeof FAULTS)[number]
const HELD_MS = 90

function faultyFetch(sim: Simulator, op: string, plan: ReadonlyArray<Fault>, statusDown: number) {
  let n = 0
  let statusFailures = 0
  const fetch = async (req: Request): Promise<Response> => {
    const name = opOf(req)
    if (name === "status" && n > 0 && statusFailures < statusDown) {
      statusFailures++
      return new Response("", { status: 503 })
    }
    if (name !== op) return sim.fetch(req)
    const fault = plan[n++] ?? "ok"
    switch (fault) {
      case "ok":
        return sim.fetch(req)
      case "500":
        return new Response("", { status: 500 })
      case "429":
        return new Response("", { status: 429 })
      case "refused":
        throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } })
      case "reset-before":
        throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } })
      case "reset-after":
        await sim.fetch(req)
        throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } })
      case "undecodable":
        await sim.fetch(req)
        return new Response("<html/>", { status: 200 })
      case "held":
        // The gateway holds the request past the client's timeout and processes it late (it ignores the abort).
        await sleep(HELD_MS)
        return sim.fetch(req)
    }
  }
  return { fetch, sends: () => n }
}

const BARE = new Set(["Timeout", "TransportError", "GatewayServerError", "DecodeError"])

function judge(r: Settled, count: number, plan: ReadonlyArray<Fault>): Array<string> {
  const problems: Array<string> = []
  if (count > 1) problems.push(`money moved ${count} times`)
  if (r.ok) {
    if (count !== 1) problems.push(`success (${String(r.value["type"])}) with ${count} moved`)
    return problems
  }
  const e = r.error
  if (BARE.has(e._tag) && plan.some((f) => f !== "refused")) problems.push(`bare ${e._tag}`)
  if (e._tag === "ReconcileConflict") problems.push(`conflict on ${String(e["field"])}`)
  if (e._tag === "OutcomeUnknown" && e["mayHaveApplied"] === false && count !== 0) problems.push(`said not applied, ${count} moved`)
  if (typeof e["idempotencyKey"] !== "string") problems.push(`${e._tag} without idempotencyKey`)
  return problems
}

const plans = (seed: number, runs: number) =>
  fc.sample(fc.tuple(fc.array(fc.constantFrom(...FAULTS), { minLength: 1, maxLength: 4 }), fc.nat(3)), { seed, numRuns: runs })

const options = { timeoutMs: 40, deadlineMs: 1500, retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 3 }, reconcile: { settleMs: 150, pollIntervalMs: 10 } }

describe("attack: a fault at every attempt (seeded sequences)", () => {
  it("sale: 24 sequences, then the same call again", async () => {
    const results = await Promise.all(plans(19, 24).map(async ([plan, statusDown]) => {
      const sim = newSim()
      try {
        const f = faultyFetch(sim, "sale", plan, statusDown)
        const pay = client(sim, { ...options, fetch: f.fetch })
        const input = saleInput()
        const r = await settled(pay.sale(input))
        await letLand(sim, HELD_MS + 40)
        const count = sim.orders().filter((o) => o.client_orderid === input.client_orderid).length
        const problems = judge(r, count, plan)
        // The merchant calls again (same input, no key): never a second order.
        const again = await settled(pay.sale(input))
        await letLand(sim, HELD_MS + 40)
        const after = sim.orders().filter((o) => o.client_orderid === input.client_orderid).length
        if (after > 1) problems.push(`again: ${after} orders`)
        if (!again.ok && BARE.has(again.error._tag)) problems.push(`again: bare ${again.error._tag}`)
        return problems.map((p) => `[${plan.join(",")}] status down ${statusDown}: ${p}`)
      } finally {
        await sim.close()
      }
    }))
    expect(results.flat()).toEqual([])
  })

  for (const [method, segment, type] of [["capture", "capture", "capture"], ["return", "return", "return"], ["void", "void", "void"]] as const) {
    it(`${method}: 16 sequences, then the same call again with its key`, async () => {
      const results = await Promise.all(plans(method.length * 7, 16).map(async ([plan, statusDown]) => {
        const sim = newSim()
        try {
          const o = await approvedOrder(client(sim), method === "capture" ? "preauth" : "sale")
          const f = faultyFetch(sim, segment, plan, statusDown)
          const pay = client(sim, { ...options, fetch: f.fetch })
          const input = method === "void" ? { client_orderid: o.client_orderid, orderid: o.orderid } : { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
          const call = (opts: Record<string, unknown>) => (pay as unknown as Record<string, (i: unknown, o: unknown) => Promise<unknown>>)[method]!(input, opts)
          const r = await settled(call({}))
          await letLand(sim, HELD_MS + 40)
          const problems = judge(r, moved(sim, o.orderid, type), plan)
          const key = (r.ok ? r.value : r.error)["idempotencyKey"] as string
          const again = await settled(call({ idempotencyKey: key }))
          await letLand(sim, HELD_MS + 40)
          const count = moved(sim, o.orderid, type)
          if (count > 1) problems.push(`again: moved ${count} times`)
          if (again.ok && count !== 1) problems.push(`again: success with ${count} moved`)
          const ledger = sim.order(o.orderid)!
          const figure = method === "capture" ? ledger.captured : method === "return" ? ledger.returned : ledger.voided
          if (count === 1 && figure !== (method === "void" ? "10.00" : "4.00")) problems.push(`ledger shows ${figure}`)
          for (const v of sim.checkInvariants()) problems.push(`invariant ${v.invariant}`)
          return problems.map((p) => `[${plan.join(",")}] status down ${statusDown}: ${p}`)
        } finally {
          await sim.close()
        }
      }))
      expect(results.flat()).toEqual([])
    })
  }
})
