/**
 * Attack suite, awaitFinal: what it says about the money of orders that moved on
 * (voided, partly and fully refunded in steps, charged back, hold released on a preauth), and what
 * its timeout says when status was never reachable.
 */
import type { Simulator } from "@paykit/testkit"
import { beforeEach, describe, expect, it } from "vitest"
import type { PromisePayClient } from "../../src/index"
import { approvedOrder, client, letLand, newSim } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const sim_ = (sim: Simulator, path: string, body = "") =>
  sim.fetch(new Request(`http://127.0.0.1:4010${path}`, { method: "POST", body, headers: { "Content-Type": "application/json" } }))

type Step = (pay: PromisePayClient, sim: Simulator, o: { client_orderid: string; orderid: string }) => Promise<unknown>
const ret = (amount: string): Step => (pay, _s, o) => pay.return({ ...o, amount, currency: "USD" })
const cap = (amount: string): Step => (pay, _s, o) => pay.capture({ ...o, amount, currency: "USD" })
const voidIt: Step = (pay, _s, o) => pay.void(o)
const settle: Step = (_p, sim, o) => sim_(sim, `/__sim/orders/${o.orderid}/settle`)
const chargeback = (amount?: string): Step => (_p, sim, o) => sim_(sim, `/__sim/orders/${o.orderid}/chargeback`, amount === undefined ? "" : JSON.stringify({ amount }))

const CASES: Array<[string, "sale" | "preauth", Array<Step>, string]> = [
  ["a voided sale", "sale", [voidIt], "voided"],
  ["a voided preauth", "preauth", [voidIt], "voided"],
  ["a sale refunded in part", "sale", [ret("4.00")], "partially-refunded"],
  ["a sale refunded in two partial returns summing to the whole", "sale", [ret("4.00"), ret("6.00")], "refunded"],
  ["a preauth captured in part then refunded in part", "preauth", [cap("6.00"), ret("2.00")], "partially-refunded"],
  ["a preauth captured in part then refunded fully", "preauth", [cap("6.00"), ret("6.00")], "refunded"],
  ["a preauth captured in part (nothing refunded)", "preauth", [cap("6.00")], "approved"],
  ["a preauth whose hold was released in full by a return", "preauth", [ret("10.00")], "refunded"],
  ["a preauth whose hold was released in part by a return", "preauth", [ret("3.00")], "partially-refunded"],
  ["a settled sale charged back", "sale", [settle, chargeback()], "charged-back"],
  ["a settled sale charged back in part, then refunded in part", "sale", [settle, chargeback("3.00"), ret("2.00")], "charged-back"]
]

describe("attack: awaitFinal reports what happened to the money", () => {
  for (const [name, kind, steps, expected] of CASES) {
    it(`${name} → ${expected}`, async () => {
      const sim = newSim()
      try {
        const pay = client(sim)
        const o = await approvedOrder(pay, kind)
        for (const step of steps) {
          const r = await step(pay, sim, { client_orderid: o.client_orderid, orderid: o.orderid })
          if (r instanceof Response) expect(r.status, await r.clone().text()).toBe(200)
          await letLand(sim)
        }
        const final = await pay.awaitFinal({ client_orderid: o.client_orderid, orderid: o.orderid })
        expect(final._tag).toBe("Final")
        if (final._tag === "Final") expect(final.outcome).toBe(expected)
      } finally {
        await sim.close()
      }
    })
  }
})

describe("attack: awaitFinal when status is never reachable", () => {
  for (const code of [500, 503, 429]) {
    it(`status answering ${code} throughout: AwaitFinalTimeout says status was never reached and keeps the last error`, async () => {
      const sim = newSim()
      try {
        const pay = client(sim, { fetch: async () => new Response("", { status: code }), poll: { fastIntervalMs: 2, fastPhaseMs: 20, slowIntervalMs: 5, deadlineMs: 60 } })
        const r = await pay.awaitFinal({ client_orderid: "nowhere" }).then(() => undefined, (e: Record<string, unknown>) => e)
        expect(r).toMatchObject({ _tag: "AwaitFinalTimeout", reason: "deadline", statusReached: false, lastStatus: undefined })
        expect((r!["lastError"] as { _tag: string; httpStatus: number })).toMatchObject({ _tag: "GatewayServerError", httpStatus: code })
        expect(String(r!["message"])).not.toContain("unknown")
      } finally {
        await sim.close()
      }
    })
  }

  it("status refusing (403): awaitFinal stops at once with AuthenticationError", async () => {
    const sim = newSim()
    try {
      const pay = client(sim, { fetch: async () => new Response("", { status: 403 }) })
      await expect(pay.awaitFinal({ client_orderid: "x" })).rejects.toMatchObject({ _tag: "AuthenticationError" })
    } finally {
      await sim.close()
    }
  })

  it("a signal aborted before awaitFinal: Cancelled", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const ctrl = new AbortController()
      ctrl.abort()
      await expect(pay.awaitFinal({ client_orderid: "x" }, { signal: ctrl.signal })).rejects.toMatchObject({ _tag: "Cancelled" })
    } finally {
      await sim.close()
    }
  })
})

describe("attack: awaitFinal policy figures that break their rule", () => {
  for (const [field, value] of [["deadlineMs", Number.NaN], ["deadlineMs", -1], ["fastIntervalMs", 0], ["slowIntervalMs", Number.NaN], ["unknownGraceMs", -5], ["fastPhaseMs", Number.POSITIVE_INFINITY]] as const) {
    it(`${field}: ${value} → InputError naming it, no status asked (a NaN deadline polled forever, a 0 interval in a tight loop)`, async () => {
      const sim = newSim()
      try {
        let asked = 0
        const pay = client(sim, { fetch: (req) => { asked++; return sim.fetch(req) } })
        const r = await Promise.race([
          pay.awaitFinal({ client_orderid: "x" }, { [field]: value }).then(() => "resolved", (e: { _tag: string; field?: string }) => `${e._tag}:${e.field}`),
          new Promise((resolve) => setTimeout(() => resolve("still polling"), 300))
        ])
        expect(r).toBe(`InputError:${field}`)
        expect(asked).toBe(0)
      } finally {
        await sim.close()
      }
    })
  }
})
