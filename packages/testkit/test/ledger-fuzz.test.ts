/**
 * Random lifecycles through the simulator's fetch interface (not a model: the other suite predicts
 * each step). Whatever is accepted or refused, the money seen from outside must add up at every step,
 * and the simulator must never have recorded a broken invariant.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { createSimulator, requests, testMerchant, type OrderView } from "../src/index"
import { signedRequest, statusOf } from "./helpers"

const cents = (text: string): bigint => BigInt(text.replace(".", ""))

/** The invariants of decision 10 as an outsider reads them from the order view (major-unit strings). */
function addsUp(view: OrderView): string[] {
  const [authorized, captured, returned, released, voided, chargedBack] = [view.authorized, view.captured, view.returned, view.holdReleased, view.voided, view.chargedBack].map(cents) as [bigint, bigint, bigint, bigint, bigint, bigint]
  const out: string[] = []
  if (captured + released > authorized) out.push(`captured ${view.captured} + released ${view.holdReleased} > authorized ${view.authorized}`)
  if (returned + voided + chargedBack > captured) out.push(`returned ${view.returned} + voided ${view.voided} > captured ${view.captured}`)
  const voidedOk = view.transactions.some((t) => t.type === "void" && t.status === "approved")
  if (voidedOk && captured - returned - voided !== 0n) out.push(`voided order keeps ${captured - returned - voided} captured`)
  const approvedVoid = view.transactions.findIndex((t) => t.type === "void" && t.status === "approved")
  if (approvedVoid >= 0 && view.transactions.slice(approvedVoid + 1).some((t) => t.type === "capture" || t.type === "return")) out.push("capture or return after a void")
  return out
}

/** Amounts are a share (in %) of the order's amount, so most fit and the interesting overlaps happen. */
const step = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom("CAPTURE" as const, "RETURN" as const, "VOID" as const), share: fc.option(fc.integer({ min: 1, max: 110 }), { nil: undefined, freq: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.constantFrom(0, 500, 1000, 2000, 5000) }) }
)

describe("random lifecycles through fetch: the money adds up at every step", () => {
  it("sale or preauth, then captures, returns, voids and clock advances in any order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("SALE" as const, "PREAUTH" as const, "PREAUTH" as const), fc.integer({ min: 1, max: 10000 }), fc.array(step, { minLength: 3, maxLength: 20, size: "max" }), async (kind, amount, steps) => {
        const sim = createSimulator({ processingDelayMs: 1000, settlementDelayMs: 8000 })
        try {
          const money = (n: number) => `${Math.floor(n / 100)}.${String(n % 100).padStart(2, "0")}`
          const fields = kind === "SALE" ? requests.sale({ amount: money(amount) }) : requests.preauth({ amount: money(amount) })
          const reply = await signedRequest(sim, kind, fields)
          const ids = { login: testMerchant.login, orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
          await sim.clock.advance(1000)
          for (const s of steps) {
            if (s.op === "advance") await sim.clock.advance(s.ms)
            else {
              const part = s.share === undefined ? undefined : Math.max(1, Math.round((amount * s.share) / 100))
              const r = await signedRequest(sim, s.op, part === undefined ? ids : { ...ids, amount: money(part), currency: "USD" })
              expect([200, 400]).toContain(r.status)
            }
            const view = sim.order(ids.orderid)!
            expect(addsUp(view)).toEqual([])
            const status = await statusOf(sim, ids.orderid, ids.client_orderid)
            if (kind === "PREAUTH") expect([status["captured-amount"], status["hold-released-amount"]]).toEqual([view.captured, view.holdReleased])
            expect(status["returned-amount"]).toBe(view.returned)
          }
          await sim.clock.advance(10_000)
          expect(addsUp(sim.order(ids.orderid)!)).toEqual([])
          expect(sim.order(ids.orderid)!.inFlight).toBe("0.00")
          expect(sim.checkInvariants()).toEqual([])
        } finally {
          await sim.close()
        }
      }),
      { numRuns: 100 }
    )
  }, 60_000)
})
