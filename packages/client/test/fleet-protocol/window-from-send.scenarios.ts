/**
 * Fleet probe, the processing window: the window that proves a capture did not land runs from the
 * last send, not from the intent's creation. A send can leave long after its intent was recorded
 * (a resend after a first window, a slow `status` read before the first send), and the network can
 * hold it for most of a window: an order still unchanged "a window after the intent" proves nothing
 * while that send may land. Policies as in the report: a 1000 ms window, a 1500 ms deadline, a
 * 1600 ms lease.
 */
import { expect } from "vitest"
import { settled } from "../support/attacks"
import { testSleep } from "../support/test-time"
import { capturedLine, fleetPolicy, freshKey, instance, recoverOptions, verdict, Wire, type Scenario, onApprovedOrder } from "./support"

const POLICY = fleetPolicy({ timeoutMs: 1000, deadlineMs: 1500, windowMs: 1000, leaseMs: 1600, recoverOlderThanMs: 1500, recoverLeaseMs: 1000, pollMs: 50 })

/** Sleeps until `ms` after `t0` on the test's clock. */
const until = (t0: number, ms: number) => testSleep(Math.max(0, t0 + ms - Date.now()))

export const windowFromSend: ReadonlyArray<Scenario> = [
  {
    title: "a capture answered 500 is resent after its window and held 900 ms; recover() at +1650 and B's same-key call: one 4.00 capture, and recover() never calls the held send not applied",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("window-resend")
        const la = wire.link("A")
        const a = instance(sim, await fleet.store("A"), la.fetch, POLICY)
        const b = instance(sim, await fleet.store("B"), wire.link("B").fetch, POLICY)

        // The first send is answered 500 by a front server; the resend (after A's window, at
        // +1000) is held 900 ms by the network and lands after A's deadline.
        la.next("capture", { kind: "http-500" }, { kind: "hold", holdMs: 900 })
        const t0 = Date.now()
        const first = await wire.answer("A", settled(a.capture(input, { idempotencyKey: K })))
        expect(first.ok).toBe(false)

        await until(t0, 1650)
        await wire.recovered("B's recover() at +1650", b.recover(recoverOptions(POLICY)))
        await wire.answer("B (same key)", settled(b.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  },
  {
    title: "a slow status read delays A's first send by 900 ms and the network holds it; B takes K over after the lease: one 4.00 capture",
    run: async (fleet) => {
      await onApprovedOrder("preauth", "4.00", async ({ sim, wire, o, input }) => {
        const K = freshKey("window-takeover")
        const la = wire.link("A")
        const a = instance(sim, await fleet.store("A"), la.fetch, POLICY)
        const b = instance(sim, await fleet.store("B"), wire.link("B").fetch, POLICY)

        // A's read of the order before its send takes 900 ms; its capture, sent at +900, is held
        // 900 ms by the network and lands at +1800, after A's deadline.
        la.next("status", { kind: "hold", holdMs: 900 })
        la.next("capture", { kind: "hold", holdMs: 900 })
        const t0 = Date.now()
        const first = await wire.answer("A", settled(a.capture(input, { idempotencyKey: K })))
        expect(first.ok).toBe(false)

        await until(t0, 1650)
        await wire.answer("B (same key, after A's lease)", settled(b.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture"))).toBe(verdict("captured 4.00 in 1 approved capture"))
      })
    }
  }
]
