/**
 * Fleet probe, a conflict after a send: on a 20.00 preauth, capture 4.00 under K lands and its
 * reply is lost, while a 3.00 capture made in the back office lands too. The order now shows 7.00
 * captured where K expected 4.00: that proves K's send reached the gateway, never that nothing
 * moved. Whoever comes back to K (the same instance, another one, `recover()`), the order ends
 * with the two captures that were asked for, 7.00, never 11.00.
 */
import { expect } from "vitest"
import { approvedOrder, client, newSim, settled } from "../support/attacks"
import { testSleep } from "../support/test-time"
import { capturedLine, crashAfterSend, effectInstance, freshKey, instance, POLICY, recoverOptions, verdict, Wire, type Scenario } from "./support"

/** The key's instances (the back office's sends are not the key's). */
const KEY_LINKS = ["A", "B"]

/** A 20.00 preauth, the capture under K, and the back office's 3.00 capture through the wire. */
async function world() {
  const sim = newSim()
  const wire = new Wire(sim)
  const o = await approvedOrder(client(sim), "preauth", { amount: "20.00" })
  const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" }
  const office = client(sim, { fetch: wire.link("back office").fetch })
  const backOfficeCapture = () => office.capture({ ...input, amount: "3.00" })
  return { sim, wire, o, input, backOfficeCapture }
}

export const conflictReplays: ReadonlyArray<Scenario> = [
  {
    title: "K's capture lands with its reply lost while the back office captures 3.00; A retries K: 7.00 captured, never 11.00",
    run: async (fleet) => {
      const { sim, wire, o, input, backOfficeCapture } = await world()
      try {
        const K = freshKey("conflict-same")
        const la = wire.link("A")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        la.next("capture", { kind: "reset-after", meanwhile: backOfficeCapture })
        await wire.answer("A", settled(a.capture(input, { idempotencyKey: K })))
        await wire.answer("A (retry of K)", settled(a.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture", KEY_LINKS))).toBe(verdict("captured 7.00 in 2 approved captures"))
      } finally {
        await sim.close()
      }
    }
  },
  {
    title: "K's capture lands with its reply lost while the back office captures 3.00; B retries K on the shared store: 7.00 captured, never 11.00",
    run: async (fleet) => {
      const { sim, wire, o, input, backOfficeCapture } = await world()
      try {
        const K = freshKey("conflict-other")
        const la = wire.link("A")
        const a = instance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), wire.link("B").fetch)
        la.next("capture", { kind: "reset-after", meanwhile: backOfficeCapture })
        await wire.answer("A", settled(a.capture(input, { idempotencyKey: K })))
        await wire.answer("B (retry of K)", settled(b.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture", KEY_LINKS))).toBe(verdict("captured 7.00 in 2 approved captures"))
      } finally {
        await sim.close()
      }
    }
  },
  {
    title: "A dies after K's capture landed, the back office captures 3.00, B's recover() settles K, then B retries K: 7.00 captured, never 11.00",
    run: async (fleet) => {
      const { sim, wire, o, input, backOfficeCapture } = await world()
      try {
        const K = freshKey("conflict-recover")
        const la = wire.link("A")
        const a = effectInstance(sim, await fleet.store("A"), la.fetch)
        const b = instance(sim, await fleet.store("B"), wire.link("B").fetch)
        await crashAfterSend(la, "capture", a.capture(input, { idempotencyKey: K }), backOfficeCapture)

        // Until A's lease has surely run out, however far A extended it before it died.
        await testSleep(POLICY.leaseMs + POLICY.deadlineMs + POLICY.windowMs)
        await wire.recovered("B's recover()", b.recover(recoverOptions()))
        await wire.answer("B (retry of K)", settled(b.capture(input, { idempotencyKey: K })))
        await wire.settle()

        expect(verdict(capturedLine(sim, o.orderid), wire.judge("capture", KEY_LINKS))).toBe(verdict("captured 7.00 in 2 approved captures"))
      } finally {
        await sim.close()
      }
    }
  }
]
