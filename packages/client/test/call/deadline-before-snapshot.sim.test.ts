/**
 * A call on an existing order whose deadline runs out while the store answers its order lease (a
 * slow database, a paused process) reads the order with no time left: it ends `Cancelled` (nothing
 * sent, its key free to send again), never with an `InputError` about a `deadlineMs` the caller
 * never gave.
 */
import { Effect } from "effect"
import { beforeEach, describe, expect, it, vi } from "vitest"
import { openMemoryStore, type PayStoreService } from "../../src/index"
import { approvedOrder, client, newSim, moved, settled } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

useTestTime()
beforeEach(startTestTime)

/** The memory store, whose `takeOrderLease` answers only after the clock moved past `pauseMs` (no timer fires meanwhile). */
function pausingStore(store: PayStoreService, pauseMs: number): PayStoreService {
  return {
    ...store,
    takeOrderLease: (orderid, holder) =>
      Effect.tap(store.takeOrderLease(orderid, holder), () => Effect.sync(() => vi.setSystemTime(Date.now() + pauseMs)))
  }
}

describe("a call whose deadline runs out before it reads its order", () => {
  it("ends Cancelled with nothing sent, and the same key sends afterwards", async () => {
    const sim = newSim()
    try {
      const setup = client(sim)
      const { client_orderid, orderid } = await approvedOrder(setup, "preauth")
      const store = await openMemoryStore({ instanceId: "deadline-before-snapshot" })
      const pay = client(sim, { store: pausingStore(store, 6_000) })
      const key = "capture-after-the-deadline"
      const first = await settled(pay.capture({ client_orderid, orderid, amount: "3.00", currency: "USD" }, { idempotencyKey: key, deadlineMs: 5_000 }))
      expect(first.ok ? "ok" : { _tag: first.error._tag, reason: first.error["reason"] }).toEqual({ _tag: "Cancelled", reason: "deadline" })
      expect(moved(sim, orderid, "capture")).toBe(0)

      const calm = client(sim, { store })
      const again = await settled(calm.capture({ client_orderid, orderid, amount: "3.00", currency: "USD" }, { idempotencyKey: key }))
      expect(again.ok).toBe(true)
      expect(moved(sim, orderid, "capture")).toBe(1)
      await store.close()
    } finally {
      await sim.close()
    }
  })
})
