/**
 * Fleet probe, a call longer than its intent's lease: the client's lease (800 ms) is above its
 * deadline (600 ms), as docs/fleet.md asks, but one call is given `deadlineMs: 3000`. A's capture
 * under K is reset before the gateway and `status` is down for a second, so A is still proving
 * when its lease runs out; B calls K then. Only one of them may send: one 4.00 capture.
 */
import { expect } from "vitest"
import { client, settled } from "../support/attacks"
import { testSleep } from "../support/test-time"
import { capturedLine, effectInstance, freshKey, instance, POLICY, settledEffect, verdict, Wire, type Scenario, onApprovedOrder } from "./support"

/** A's own deadline: far longer than the lease. */
const LONG_DEADLINE_MS = 3000

export const leaseCoversDeadline: ReadonlyArray<Scenario> = [
  {
    title: "A's call (deadlineMs 3000, lease 800) is still proving when B calls K after the lease: one 4.00 capture",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("long-call")
        const la = wire.link("A")
        const lb = wire.link("B")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), lb.fetch)

        la.next("capture", { kind: "reset-before", meanwhile: () => la.outage("status") })
        const t0 = Date.now()
        const onA = wire.answer("A", settled(a.capture(input, { idempotencyKey: K, deadlineMs: LONG_DEADLINE_MS })))

        // A second later A's lease has run out while its call goes on; `status` comes back for both.
        await testSleep(Math.max(0, t0 + POLICY.leaseMs + 200 - Date.now()))
        // The network takes 50 ms to carry each capture: neither sees the other's before it decides.
        la.next("capture", { kind: "hold", holdMs: 50 })
        lb.next("capture", { kind: "hold", holdMs: 50 })
        la.up("status")
        await wire.answer("B (same key)", settled(b.capture(input, { idempotencyKey: K })))
        await onA
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  },
  {
    title: "the same with A on the Effect API and B's call starting while A's status is still down: one 4.00 capture",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("long-call-effect")
        const la = wire.link("A")
        const lb = wire.link("B")
        const a = effectInstance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), lb.fetch)

        la.next("capture", { kind: "reset-before", meanwhile: () => la.outage("status") })
        const t0 = Date.now()
        const onA = wire.answer("A", settledEffect(a.capture(input, { idempotencyKey: K, deadlineMs: LONG_DEADLINE_MS })))

        await testSleep(Math.max(0, t0 + POLICY.leaseMs + 200 - Date.now()))
        lb.next("capture", { kind: "hold", holdMs: 50 })
        la.next("capture", { kind: "hold", holdMs: 50 })
        const onB = wire.answer("B (same key)", settled(b.capture(input, { idempotencyKey: K })))
        // A's status comes back 10 ms after B took its decision, before B's capture lands.
        await testSleep(10)
        la.up("status")
        await Promise.all([onA, onB])
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  }
]
