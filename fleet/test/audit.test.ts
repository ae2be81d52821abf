import { describe, expect, it } from "vitest"
import { auditFleet, type CallbackRun, type Fulfilment, type JobRow, type SimOrder } from "../src/audit"
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
const fulfilments: Fulfilment[] = [
  { orderid: "1", tx_index: 0, tx_type: "sale", status: "approved", amount: sale.amount },
  { orderid: "2", tx_index: 0, tx_type: "preauth", status: "approved", amount: preauth.amount },
  { orderid: "2", tx_index: 1, tx_type: "capture", status: "approved", amount: preauth.followAmount! }
]
const jobs: JobRow[] = [{ id: sale.index, state: "done", error: null }, { id: preauth.index, state: "done", error: null }]
/** A run of onCallback: started, finished (null: killed mid-handler), completed (the handler answered 200), and its claim's lease. */
const run = (orderid: string, tx_index: number, pid: number, started_at: number, finished_at: number | null, completed_at: number | null = finished_at, lease_until: number | null = started_at + 20_000): CallbackRun =>
  ({ orderid, tx_type: "sale", tx_index, pid, claimed_at: lease_until === null ? null : started_at - 5, lease_until, started_at, finished_at, completed_at, effect: finished_at === null ? null : "fulfilled" })
const clean = { plan: [sale, preauth], orders, fulfilments, jobs, runs: [run("1", 0, 10, 100, 110)] }

describe("the fleet audit (from the simulator's ledger and the merchant's tables)", () => {
  it("is clean when every payment has one order, one of each transaction, and a recorded outcome", () => {
    expect(auditFleet(clean)).toMatchObject({ doubleCharges: 0, lostOutcomes: 0, duplicateFulfilments: 0, amountMismatches: 0, reRunsUnderLease: 0 })
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

  it("counts outcomes the merchant never recorded, recorded wrongly, still processing, or whose job never ended", () => {
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

  it("matches a fulfilment to its transaction by its index in the order, not by its type", () => {
    // Two captures on one order (the merchant's and the back office's): one fulfilment of type
    // "capture" must not count for both.
    const office = { type: "capture", status: "approved", amount: "0.01" }
    const withOffice = [orders[0]!, { ...orders[1]!, transactions: [...orders[1]!.transactions, office] }]
    const officePlan = new Map([[preauth.clientOrderId, "0.01"]])
    expect(auditFleet({ ...clean, orders: withOffice, backOffice: officePlan }).unprovenBesideBackOffice).toBe(1)
    const recorded = [...fulfilments, { orderid: "2", tx_index: 2, tx_type: "capture", status: "approved", amount: "0.01" }]
    expect(auditFleet({ ...clean, orders: withOffice, fulfilments: recorded, backOffice: officePlan })).toMatchObject({ lostOutcomes: 0, unprovenBesideBackOffice: 0, doubleCharges: 0, backOfficeCaptures: 1 })
    // Without a back-office capture planned, the second capture's missing fulfilment is a lost outcome (and a double capture).
    expect(auditFleet({ ...clean, orders: withOffice })).toMatchObject({ lostOutcomes: 1, doubleCharges: 1 })
  })

  it("tells the back office's capture (by its planned amount) from the merchant's, and counts a second merchant capture beside it", () => {
    const office = { type: "capture", status: "approved", amount: "0.01" }
    const officePlan = new Map([[preauth.clientOrderId, "0.01"]])
    const mine = orders[1]!.transactions[1]!
    const once = [orders[0]!, { ...orders[1]!, transactions: [orders[1]!.transactions[0]!, office, mine] }]
    expect(auditFleet({ ...clean, orders: once, backOffice: officePlan })).toMatchObject({ doubleCharges: 0, amountMismatches: 0, backOfficeCaptures: 1 })
    const twice = [orders[0]!, { ...orders[1]!, transactions: [orders[1]!.transactions[0]!, mine, office, mine] }]
    const audit = auditFleet({ ...clean, orders: twice, backOffice: officePlan })
    expect(audit.doubleCharges).toBe(1)
    expect(audit.examples.join("\n")).toContain(`${preauth.clientOrderId}: 2 × capture`)
  })

  it("counts an amount the gateway moved that the plan did not ask for", () => {
    const wrong = [orders[0]!, { ...orders[1]!, transactions: [orders[1]!.transactions[0]!, { type: "capture", status: "approved", amount: "999999.99" }] }]
    expect(auditFleet({ ...clean, orders: wrong }).amountMismatches).toBe(1)
  })

  it("accepts a job that ended as a conflict, an unknown or a forgotten order, and counts a failed one", () => {
    const ended = (state: string) => auditFleet({ ...clean, jobs: [jobs[0]!, { id: preauth.index, state, error: null, final_key: `${preauth.clientOrderId}:capture` }] })
    for (const state of ["conflict", "unknown", "forgotten"]) expect(ended(state).lostOutcomes).toBe(0)
    expect(ended("conflict")).toMatchObject({ jobsConflict: 1, jobsUnknown: 0 })
    expect(ended("unknown").jobsUnknown).toBe(1)
    expect(ended("forgotten").jobsForgotten).toBe(1)
    expect(ended("failed")).toMatchObject({ lostOutcomes: 1, failedJobs: 1 })
  })

  it("holds a payment the gateway never made, whose job left its opening call unknown, as unknown for a person, not as lost", () => {
    // The preauth's job gave up on its preauth as unknown, and the gateway has no order for it.
    const withoutPreauth = { ...clean, orders: [orders[0]!], fulfilments: [fulfilments[0]!] }
    const gaveUp = (state: string, step: string) => auditFleet({ ...withoutPreauth, jobs: [jobs[0]!, { id: preauth.index, state, error: null, final_key: `${preauth.clientOrderId}:${step}` }] })
    expect(gaveUp("unknown", "preauth")).toMatchObject({ lostOutcomes: 0, unknownNeverMade: 1 })
    // Anything else without an order is lost: a job that ended done, or unknown on a follow-up the order would have to exist for.
    expect(gaveUp("done", "preauth")).toMatchObject({ lostOutcomes: 1, unknownNeverMade: 0 })
    expect(gaveUp("unknown", "capture")).toMatchObject({ lostOutcomes: 1, unknownNeverMade: 0 })
  })

  it("tells a handler re-run after a kill (absorbed) from a second run after one that completed (duplicate)", () => {
    // Killed mid-handler: the first run never finished, nor was its callback marked done; its lease ran out at 2 000.
    const killedMidHandler = auditFleet({ ...clean, runs: [run("1", 0, 10, 100, null, null, 2_000), run("1", 0, 11, 5_000, 5_010)] })
    expect(killedMidHandler).toMatchObject({ duplicateFulfilments: 0, reRunsAfterCrash: 1, reRunsUnderLease: 0 })
    // Killed after its effect, before the store marked the callback done.
    const killedBeforeCompletion = auditFleet({ ...clean, runs: [run("1", 0, 10, 100, 110, null, 2_000), run("1", 0, 11, 5_000, 5_010)] })
    expect(killedBeforeCompletion).toMatchObject({ duplicateFulfilments: 0, reRunsAfterCrash: 1 })
    // Completed, then run again (two deliveries both ran it, or a lease ran out under a live handler).
    const twice = auditFleet({ ...clean, runs: [run("1", 0, 10, 100, 110), run("1", 0, 11, 105, 130)] })
    expect(twice).toMatchObject({ duplicateFulfilments: 1, reRunsAfterCrash: 0 })
    expect(twice.examples.join("\n")).toContain("1|0 (sale): onCallback ran again (pid 11)")
  })

  it("flags a re-run that began while the earlier run still held the claim's lease, even when the earlier one never completed", () => {
    // The first run's process died (or still runs) holding its claim until 20 100; a second run began
    // at 5 000 under a claim of its own: two live claims of one callback, not a crash's re-run.
    const underLease = auditFleet({ ...clean, runs: [run("1", 0, 10, 100, null, null, 20_100), run("1", 0, 11, 5_000, 5_010)] })
    expect(underLease).toMatchObject({ duplicateFulfilments: 1, reRunsUnderLease: 1, reRunsAfterCrash: 0 })
    expect(underLease.examples.join("\n")).toContain("15100 ms before the lease of the run of pid 10 ran out")
    // The same two runs once the first lease had run out: the re-run its lease exists for.
    const afterLease = auditFleet({ ...clean, runs: [run("1", 0, 10, 100, null, null, 4_999), run("1", 0, 11, 5_000, 5_010)] })
    expect(afterLease).toMatchObject({ duplicateFulfilments: 0, reRunsUnderLease: 0, reRunsAfterCrash: 1 })
    // Runs of two different transactions of one order never meet.
    const twoTransactions = auditFleet({ ...clean, runs: [run("2", 0, 10, 100, null, null, 20_100), run("2", 1, 11, 5_000, 5_010)] })
    expect(twoTransactions).toMatchObject({ duplicateFulfilments: 0, reRunsUnderLease: 0, reRunsAfterCrash: 0 })
  })
})
