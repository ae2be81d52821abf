/**
 * `proveChargeback` as a property: over random partial chargebacks on one order, delivered in random
 * order among forged variants (random amounts, approval codes copied or changed), what the chain of
 * vouched totals lets through never exceeds the order's `chargeback-amount`, a forged approval code
 * never passes, and chargebacks delivered before the next one is made all pass, once each.
 */
import { Effect, Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { memoryCallbackStore } from "../../src/callbacks/handler"
import { proveChargeback, type ClaimOnce, type ReleaseClaim } from "../../src/callbacks/transactions"
import type { Callback } from "../../src/callbacks/verify"
import type { StatusReply } from "../../src/operations/table"

const ORDER = "1000042"
const money = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`
const code = (i: number) => `0420${String(i).padStart(2, "0")}`

const callback = (cents: number, approval: string): Callback => ({
  status: "approved",
  orderid: ORDER,
  client_orderid: "inv-1",
  claims: { type: "chargeback", amount: money(cents), "approval-code": approval },
  raw: `amount=${cents}&approval=${approval}`
})

const statusOf = (total: number, lastCode: string) =>
  ({ "paynet-order-id": ORDER, status: "approved", "transaction-type": "chargeback", "chargeback-amount": money(total), "approval-code": lastCode }) as unknown as StatusReply

/** One step: make the next chargeback, deliver chargeback `i` (genuine), or a forgery. */
type Step =
  | { readonly kind: "make" }
  | { readonly kind: "genuine"; readonly i: number }
  // `choice` picks the forged amount among the ones that matter (the total, what any suffix of the
  // chargebacks made so far sums to, each chargeback's own amount) or `cents`.
  | { readonly kind: "forged"; readonly cents: number; readonly copyCode: boolean; readonly choice?: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: "make" }),
  fc.nat(5).map((i): Step => ({ kind: "genuine", i })),
  fc.record({ cents: fc.integer({ min: 1, max: 2000 }), copyCode: fc.boolean(), choice: fc.nat(12) }).map((f): Step => ({ kind: "forged", ...f }))
)

function run(amounts: ReadonlyArray<number>, steps: ReadonlyArray<Step>) {
  const store = memoryCallbackStore()
  const claim: ClaimOnce = (key) => Effect.sync(() => store.claim(key, 60_000) as "claimed" | "running-elsewhere" | "done")
  const release: ReleaseClaim = (key) => Effect.sync(() => void store.release(key))
  let made = 0
  let delivered = 0
  const deliveredGenuine = new Set<number>()
  const passedForged: Array<{ cents: number; copyCode: boolean }> = []
  const deliver = (cb: Callback) => {
    const total = amounts.slice(0, made).reduce((a, b) => a + b, 0)
    const proof = Effect.runSync(proveChargeback(cb, statusOf(total, code(made - 1)), claim, release))
    if (proof._tag !== "Proven") return false
    for (const k of [proof.claimKey, ...(proof.moreKeys ?? [])]) store.complete(k)
    delivered += Number(cb.claims.amount!.replace(".", ""))
    expect(delivered).toBeLessThanOrEqual(total)
    return true
  }
  for (const s of steps) {
    if (s.kind === "make") {
      if (made < amounts.length) made++
    } else if (s.kind === "genuine") {
      if (s.i < made && deliver(callback(amounts[s.i]!, code(s.i)))) {
        expect(deliveredGenuine.has(s.i)).toBe(false)
        deliveredGenuine.add(s.i)
      }
    } else if (made > 0) {
      const sums = amounts.slice(0, made).map((_, i) => amounts.slice(i, made).reduce((a, b) => a + b, 0))
      const candidates = [...sums, ...amounts.slice(0, made), s.cents]
      const cents = s.choice === undefined ? s.cents : candidates[s.choice % candidates.length]!
      if (deliver(callback(cents, s.copyCode ? code(made - 1) : "999999"))) passedForged.push({ cents, copyCode: s.copyCode })
    }
  }
  return { passedForged, deliveredGenuine, made }
}

describe("proveChargeback", () => {
  it("never vouches for more than chargeback-amount; a changed approval code never passes", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 4 }), fc.array(step, { maxLength: 30 }), (amounts, steps) => {
        const { passedForged } = run(amounts, steps)
        expect(passedForged.every((f) => f.copyCode)).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("chargebacks each delivered before the next is made all pass, once each, whatever forgeries come between", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 4 }), fc.array(fc.integer({ min: 1, max: 2000 }), { maxLength: 4 }), (amounts, noise) => {
        const steps: Array<Step> = []
        amounts.forEach((_, i) => {
          steps.push({ kind: "make" })
          // Forgeries that are not this chargeback's exact remainder, before the genuine one.
          for (const cents of noise) if (cents !== amounts[i]) steps.push({ kind: "forged", cents, copyCode: true })
          steps.push({ kind: "genuine", i }, { kind: "genuine", i })
        })
        const { passedForged, deliveredGenuine } = run(amounts, steps)
        expect(passedForged).toEqual([])
        expect([...deliveredGenuine].sort()).toEqual(amounts.map((_, i) => i))
      }),
      { numRuns: 300 }
    )
  })

  it("an amount of zero or beyond the total is contradicted; a chargeback the order does not show is unconfirmed", () => {
    const store = memoryCallbackStore()
    const claim: ClaimOnce = (key) => Effect.sync(() => store.claim(key, 60_000) as "claimed")
    const release: ReleaseClaim = (key) => Effect.sync(() => void store.release(key))
    const prove = (cb: Callback, status: StatusReply) => Effect.runSync(proveChargeback(cb, status, claim, release))
    expect(prove(callback(0, code(0)), statusOf(500, code(0)))).toMatchObject({ _tag: "NotProven", reason: "contradicted" })
    expect(prove(callback(501, code(0)), statusOf(500, code(0)))).toMatchObject({ _tag: "NotProven", reason: "contradicted" })
    const noChargeback = { ...statusOf(500, code(0)), "transaction-type": "return" } as unknown as StatusReply
    expect(prove(callback(500, code(0)), noChargeback)).toMatchObject({ _tag: "NotProven", reason: "unconfirmed" })
    // Nothing was left held by the refusals: the genuine one still proves.
    expect(Either.right(prove(callback(500, code(0)), statusOf(500, code(0))))).toMatchObject(Either.right({ _tag: "Proven" }))
  })
})
