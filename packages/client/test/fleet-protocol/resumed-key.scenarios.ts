/**
 * Fleet probe, a resumed key: a key an instance resumes from its own memory goes through the shared
 * store first. A's capture under K is reset before the gateway and `status` is down, so A answers
 * `OutcomeUnknown` and keeps K as "unknown" in its memory while the store holds K unfinished.
 * Whatever comes next (a `recover()` that truthfully records "not applied", a take-over by B, a
 * restart), K moves the money once: one 4.00 capture on the order, and every answer is backed by
 * the gateway's ledger.
 */
import { expect } from "vitest"
import { client, settled } from "../support/attacks"
import { testSleep } from "../support/test-time"
import { capturedLine, effectInstance, freshKey, instance, POLICY, recoverOptions, settledEffect, verdict, Wire, type Link, type Scenario, onApprovedOrder } from "./support"

/**
 * From the end of A's call until its intent's lease has surely run out: the lease (recorded at the
 * start of the call, and however far a live call extends it) plus the call's deadline and window.
 */
const PAST_LEASE_MS = POLICY.leaseMs + POLICY.deadlineMs + POLICY.windowMs

/** A's capture under K is reset before the gateway; `status` is down from then until A has answered. */
function resetWithStatusDown(link: Link): void {
  link.next("capture", { kind: "reset-before", meanwhile: () => link.outage("status") })
}

export const resumedKey: ReadonlyArray<Scenario> = [
  {
    title: "B's recover() records K not applied (true), A resumes K from its memory, B retries K: one 4.00 capture",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("resumed-recover")
        const la = wire.link("A")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), wire.link("B").fetch)

        resetWithStatusDown(la)
        const first = await wire.answer("A", settled(a.capture(input, { idempotencyKey: K })))
        la.up("status")
        expect(first.ok).toBe(false)

        await testSleep(PAST_LEASE_MS)
        await wire.recovered("B's recover()", b.recover(recoverOptions()))
        await wire.answer("A (retry of K)", settled(a.capture(input, { idempotencyKey: K })))
        await wire.answer("B (retry of K)", settled(b.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  },
  {
    title: "after the lease, A (Effect API, resuming from memory) and B (taking K over) retry K at the same moment: one 4.00 capture",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("resumed-race")
        const la = wire.link("A")
        const lb = wire.link("B")
        const a = effectInstance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), lb.fetch)

        resetWithStatusDown(la)
        const first = await wire.answer("A", settledEffect(a.capture(input, { idempotencyKey: K })))
        la.up("status")
        expect(first.ok).toBe(false)

        await testSleep(PAST_LEASE_MS)
        // The network takes 20 ms to carry each capture: both instances read the order before either lands.
        la.next("capture", { kind: "hold", holdMs: 20 })
        lb.next("capture", { kind: "hold", holdMs: 20 })
        await Promise.all([
          wire.answer("A (retry of K)", settledEffect(a.capture(input, { idempotencyKey: K }))),
          wire.answer("B (retry of K)", settled(b.capture(input, { idempotencyKey: K })))
        ])
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  },
  {
    title: "one process: recover() on its schedule, a same-key retry, then a restart that replays K: one 4.00 capture",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("resumed-restart")
        const link = wire.link("P")
        const p = instance(sim, await fleet.store("P"), link.fetch)

        resetWithStatusDown(link)
        const first = await wire.answer("P", settled(p.capture(input, { idempotencyKey: K })))
        link.up("status")
        expect(first.ok).toBe(false)

        await testSleep(PAST_LEASE_MS)
        await wire.recovered("P's scheduled recover()", p.recover(recoverOptions()))
        await wire.answer("P (retry of K)", settled(p.capture(input, { idempotencyKey: K })))

        // The process restarts: a new client on the same data, and the merchant's job replays K.
        const restarted = instance(sim, await fleet.store("P restarted"), wire.link("P after restart").fetch)
        await wire.answer("P after restart (replay of K)", settled(restarted.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  }
]
