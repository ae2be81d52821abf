/**
 * Attack suite: `recover()` and a take-over judge a crashed call on
 * an existing order by comparing the order with the snapshot the crashed instance stored. Another
 * instance's deliberate call on the same order since then moves the same figures.
 */
import { beforeEach, describe, expect, it } from "vitest"
import { openMemoryStore } from "../../src/index"
import { approvedOrder, client, crashHolding, letLand, newSim, settled, sleep } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

async function crashedReturnThenSibling() {
  const sim = newSim()
  const store = await openMemoryStore()
  const o = await approvedOrder(client(sim), "sale")
  const input = { client_orderid: o.client_orderid, orderid: o.orderid, amount: "3.00", currency: "USD" }
  // Instance 1 snapshots the order, then hangs before its return leaves, and dies.
  await crashHolding(sim, store, "return", false, 50, (instance) => instance.return(input, { idempotencyKey: "ship-A" }))
  // Instance 2 refunds another 3.00 (another item), deliberately, under its own key.
  const other = client(sim, { store })
  const b = await settled(other.return(input, { idempotencyKey: "ship-B" }))
  expect(b.ok).toBe(true)
  await letLand(sim)
  expect(sim.order(o.orderid)!.returned).toBe("3.00")
  await sleep(60)
  return { sim, store, o, input, other }
}

describe("attack: a crashed call judged after a sibling call moved the same order", () => {
  it("recover() does not settle the crashed 3.00 return as applied from the sibling's 3.00", async () => {
    const { sim, store, o, other } = await crashedReturnThenSibling()
    try {
      const report = await other.recover({ olderThanMs: 0, leaseMs: 1000, settleMs: 0 })
      expect(report.applied).toBe(0)
      expect(sim.order(o.orderid)!.returned).toBe("3.00")
    } finally {
      await store.close()
      await sim.close()
    }
  })

  it("the merchant's same-key retry on another instance takes the crashed intent over: never 'reconciled' from the sibling's 3.00", async () => {
    const { sim, store, o, input, other } = await crashedReturnThenSibling()
    try {
      const r = await settled(other.return(input, { idempotencyKey: "ship-A" }))
      await letLand(sim)
      const returned = sim.order(o.orderid)!.returned
      expect(`${r.ok ? String(r.value["type"]) : r.error._tag} at ${returned}`).toMatch(/^(async-response at 6\.00|OutcomeUnknown at 3\.00)$/)
    } finally {
      await store.close()
      await sim.close()
    }
  })
})
