/**
 * Fleet probe, an order the gateway forgot: the simulator keeps two final orders
 * (`retention: { maxOrders: 2 }`). A's sale under K is charged, its reply is lost and `status` is
 * down, so A answers `OutcomeUnknown`; three newer orders make the gateway forget A's. When K is
 * taken up again a day later, `order-not-found` says the gateway no longer knows the order, not
 * that it never saw the sale: the customer is charged once, and nobody reports the paid order as
 * unpaid.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import { NOT_FOUND_UNPROVEN } from "../../src/intents/verdicts"
import { approvedOrder, client, newSim, settled } from "../support/attacks"
import { saleInput } from "../support/fixtures"
import { testSleep } from "../support/test-time"
import { freshKey, instance, recoverOptions, verdict, Wire, type Scenario } from "./support"

const DAY_MS = 24 * 60 * 60 * 1000

/** A's sale under K, charged with its reply lost and `status` down; then the gateway forgets it. */
async function forgottenSale() {
  const sim = newSim({ retention: { maxOrders: 2 } })
  const wire = new Wire(sim)
  const input = saleInput()
  const K = freshKey("forgotten")
  const la = wire.link("A")
  la.next("sale", { kind: "reset-after", meanwhile: () => la.outage("status") })
  return { sim, wire, input, K, la }
}

/** The sales the gateway approved for `client_orderid`, forgotten orders included, in one line. */
function chargedLine(wire: Wire, client_orderid: string): string {
  const sales = wire.approved(client_orderid, "sale")
  return `${sales.length} approved sale${sales.length === 1 ? "" : "s"} (${sales.map((s) => s.amount).join(" + ")})`
}

/** Three newer orders; the gateway forgets the oldest final ones. */
async function newerOrders(sim: ReturnType<typeof newSim>, wire: Wire, client_orderid: string) {
  await wire.settle()
  expect(chargedLine(wire, client_orderid)).toBe("1 approved sale (10.00)")
  for (let i = 0; i < 3; i++) await approvedOrder(client(sim), "sale")
  expect(sim.orderByClientOrderId(client_orderid)).toBeUndefined()
}

export const forgottenOrder: ReadonlyArray<Scenario> = [
  {
    title: "a day later, B's recover() reads order-not-found for A's charged sale and B retries K: one charge, and recover() never reports the paid sale as not applied",
    run: async (fleet) => {
      const { sim, wire, input, K, la } = await forgottenSale()
      try {
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), wire.link("B").fetch)
        const first = await wire.answer("A", settled(a.sale(input, { idempotencyKey: K })))
        la.up("status")
        expect(first.ok).toBe(false)
        await newerOrders(sim, wire, input.client_orderid)

        await testSleep(DAY_MS)
        await wire.recovered("B's recover() a day later", b.recover(recoverOptions()))
        await wire.answer("B (retry of K)", settled(b.sale(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(chargedLine(wire, input.client_orderid), wire.judge("sale"))).toBe(verdict("1 approved sale (10.00)"))
      } finally {
        await sim.close()
      }
    }
  },
  {
    title: "a day later, B's recover() records A's sale as unknown for a person: final (no later run claims it), and K replays OutcomeUnknown without a send",
    run: async (fleet) => {
      const { sim, wire, input, K, la } = await forgottenSale()
      try {
        const storeB = await fleet.store("B")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, storeB, wire.link("B").fetch)
        const first = await wire.answer("A", settled(a.sale(input, { idempotencyKey: K })))
        la.up("status")
        expect(first.ok).toBe(false)
        await newerOrders(sim, wire, input.client_orderid)

        await testSleep(DAY_MS)
        const report = await wire.recovered("B's recover() a day later", b.recover(recoverOptions()))
        // Unknown for good, recorded as such: not left unfinished for every later run to claim again.
        expect({ unknown: report.unknown, unresolved: report.unresolved, notApplied: report.notApplied }).toEqual({ unknown: 1, unresolved: 0, notApplied: 0 })
        const intent = await Effect.runPromise(storeB.findByKey(K))
        expect(intent?.outcome).toMatchObject({ _tag: "Failed", errorTag: NOT_FOUND_UNPROVEN })
        await testSleep(DAY_MS)
        expect((await wire.recovered("B's recover() a day after", b.recover(recoverOptions()))).claimed).toBe(0)

        const salesBefore = wire.sends.filter((s) => s.op === "sale").length
        const retry = await wire.answer("B (retry of K)", settled(b.sale(input, { idempotencyKey: K })))
        expect(retry.ok ? "ok" : (retry.error as { _tag?: string; mayHaveApplied?: boolean })).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
        expect(wire.sends.filter((s) => s.op === "sale").length).toBe(salesBefore)
        await wire.settle()
        expect(verdict(chargedLine(wire, input.client_orderid), wire.judge("sale"))).toBe(verdict("1 approved sale (10.00)"))
      } finally {
        await sim.close()
      }
    }
  },
  {
    title: "a day later, A itself retries K (its memory still holds it): order-not-found, one charge",
    run: async (fleet) => {
      const { sim, wire, input, K, la } = await forgottenSale()
      try {
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const first = await wire.answer("A", settled(a.sale(input, { idempotencyKey: K })))
        la.up("status")
        expect(first.ok).toBe(false)
        await newerOrders(sim, wire, input.client_orderid)

        await testSleep(DAY_MS)
        await wire.answer("A (retry of K)", settled(a.sale(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(chargedLine(wire, input.client_orderid), wire.judge("sale"))).toBe(verdict("1 approved sale (10.00)"))
      } finally {
        await sim.close()
      }
    }
  }
]
