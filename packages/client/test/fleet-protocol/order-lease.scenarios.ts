/**
 * Fleet probe, calls on one order across instances: a call on an existing order proves its outcome
 * by comparing the order before its send with the order after, so two live instances calling on
 * one order must take turns from snapshot to proof. A (key KA) and B (key KB) each capture 3.00 on
 * one order at the same moment: A's capture lands with its reply lost, B's is answered 500 by a
 * front server and never reaches the gateway. B must not take A's money as the proof of its own
 * capture: every instance that answers success has a capture of its own on the ledger.
 */
import { expect } from "vitest"
import { settled } from "../support/attacks"
import { capturedLine, effectInstance, instance, freshKey, settledEffect, verdict, Wire, type Scenario, onApprovedOrder } from "./support"

export const orderLease: ReadonlyArray<Scenario> = [
  {
    title: "A and B capture 3.00 each on one order at once, A's reply lost after it landed, B's answered 500 before the gateway: B never answers success from A's money",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "3.00", async ({ sim, wire, o, input }) => {
        const la = wire.link("A")
        const lb = wire.link("B")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), lb.fetch)

        // The network takes 20 ms to carry each capture: both instances have read the order by then.
        la.next("capture", { kind: "reset-after", holdMs: 20 })
        lb.next("capture", { kind: "http-500", holdMs: 20 })
        await Promise.all([
          wire.answer("A (KA)", settled(a.capture(input, { idempotencyKey: freshKey("KA") })), ["A"]),
          wire.answer("B (KB)", settled(b.capture(input, { idempotencyKey: freshKey("KB") })), ["B"])
        ])
        await wire.settle()

        // However many captures landed (B may send its own after A's), each success is backed by a
        // capture of the instance that answered it.
        const money = capturedLine(sim, o.orderid)
        expect(verdict(money, wire.judge("capture"))).toBe(verdict(money))
      })
    }
  },
  {
    title: "the same with B on the Effect API and B's capture reset before the gateway: B never answers success from A's money",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "3.00", async ({ sim, wire, o, input }) => {
        const la = wire.link("A")
        const lb = wire.link("B")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = effectInstance(sim, await fleet.store("B"), lb.fetch)

        la.next("capture", { kind: "reset-after", holdMs: 20 })
        lb.next("capture", { kind: "reset-before", holdMs: 20 })
        await Promise.all([
          wire.answer("A (KA)", settled(a.capture(input, { idempotencyKey: freshKey("KA") })), ["A"]),
          wire.answer("B (KB)", settledEffect(b.capture(input, { idempotencyKey: freshKey("KB") })), ["B"])
        ])
        await wire.settle()

        const money = capturedLine(sim, o.orderid)
        expect(verdict(money, wire.judge("capture"))).toBe(verdict(money))
      })
    }
  }
]
