import { describe, expect, it } from "vitest"
import { auditFleet, type CallbackRun, type SimOrder } from "../src/audit"
import { planPayments } from "../src/plan"

// Two planned payments: a sale, and a preauth with a partial capture.
const plan = planPayments(40, 3).filter((p) => p.flow !== "sale-return").slice(0, 2)
const [sale, preauth] = [plan.find((p) => p.flow === "sale")!, plan.find((p) => p.flow === "preauth-capture")!]
const orders: SimOrder[] = [
  { orderid: "1", client_orderid: sale.clientOrderId, transactions: [{ type: "sale", status: "approved", amount: sale.amount }] },
  {
    orderid: "2", client_orderid: preauth.clientOrderId,
    transactions: [{ type: "preauth", status: "approved", amount: preauth.amount }, { type: "capture", status: "approved", amount: preauth.followAmount! }]
  }
]
const fulfilments = [
  { orderid: "1", tx_type: "sale", status: "approved", amount: sale.amount },
  { orderid: "2", tx_type: "preauth", status: "approved", amount: preauth.amount },
  { orderid: "2", tx_type: "capture", status: "approved", amount: preauth.followAmount! }
]
const jobs = [{ id: sale.index, state: "done", error: null }, { id: preauth.index, state: "done", error: null }]
const run = (orderid: string, tx_type: string, pid: number, started_at: number, finished_at: number | null, completed_at: number | null = finished_at): CallbackRun =>
  ({ orderid, tx_type, pid, started_at, finished_at, completed_at, effect: finished_at === null ? null : "fulfilled" })
const clean = { plan: [sale, preauth], orders, fulfilments, jobs, runs: [run("1", "sale", 10, 100, 110)] }

describe("the fleet audit (from the simulator's ledger and the merchant's tables)", () => {
  it("is clean when every payment has one order, one of each transaction, and a recorded outcome", () => {
    expect(auditFleet(clean)).toMatchObject({ doubleCharges: 0, lostOutcomes: 0, duplicateFulfilments: 0, amountMismatches: 0 })
  })

  it("counts a second order for one payment, a second capture, and an order nobody planned as double charges", () => {
    const twice: SimOrder[] = [
      ...orders,
      { orderid: "3", client_orderid: sale.clientOrderId, transactions: [{ type: "sale", status: "approved", amount: sale.amount }] },
      { orderid: "4", client_orderid: "stranger", transactions: [] }
    ]
    twice[1] = { ...orders[1]!, transactions: [...orders[1]!.transactions, { type: "capture", status: "approved", amount: preauth.followAmount! }] }
    expect(auditFleet({ ...clean, orders: twice }).doubleCharges).toBe(3)
  })

  it("counts outcomes the merchant never recorded, recorded wrongly, still processing, or whose job never finished", () => {
    const lost = auditFleet({
      ...clean,
      orders: [orders[0]!, { ...orders[1]!, transactions: [orders[1]!.transactions[0]!, { type: "capture", status: "processing" }] }],
      fulfilments: [{ ...fulfilments[0]!, status: "declined" }],
      jobs: [jobs[0]!, { id: preauth.index, state: "pending", error: null }]
    })
    // sale recorded as declined, preauth never recorded, capture still processing, the job unfinished
    expect(lost.lostOutcomes).toBe(4)
    expect(auditFleet({ ...clean, orders: [orders[0]!] }).lostOutcomes).toBe(1)
  })

  it("counts an amount the gateway moved that the plan did not ask for", () => {
    const wrong = [orders[0]!, { ...orders[1]!, transactions: [orders[1]!.transactions[0]!, { type: "capture", status: "approved", amount: "999999.99" }] }]
    expect(auditFleet({ ...clean, orders: wrong }).amountMismatches).toBe(1)
  })

  it("tells a handler re-run after a kill (absorbed) from a second run after one that completed (duplicate)", () => {
    // Killed mid-handler: the first run never finished, nor was its callback marked done.
    const killedMidHandler = auditFleet({ ...clean, runs: [run("1", "sale", 10, 100, null), run("1", "sale", 11, 5_000, 5_010)] })
    expect(killedMidHandler).toMatchObject({ duplicateFulfilments: 0, reRunsAfterCrash: 1 })
    // Killed after its effect, before the store marked the callback done.
    const killedBeforeCompletion = auditFleet({ ...clean, runs: [run("1", "sale", 10, 100, 110, null), run("1", "sale", 11, 5_000, 5_010)] })
    expect(killedBeforeCompletion).toMatchObject({ duplicateFulfilments: 0, reRunsAfterCrash: 1 })
    // Completed, then run again (two deliveries both ran it, or a lease ran out under a live handler).
    const twice = auditFleet({ ...clean, runs: [run("1", "sale", 10, 100, 110), run("1", "sale", 11, 105, 130)] })
    expect(twice).toMatchObject({ duplicateFulfilments: 1, reRunsAfterCrash: 0 })
    expect(twice.examples.join("\n")).toContain("1|sale: onCallback ran again (pid 11)")
  })
})
