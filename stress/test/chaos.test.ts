/**
 * The shortened CI form of the chaos run (500 payments), plus checks that the audit itself can see
 * a double charge, a double refund and a lost outcome (a verdict that cannot fail proves nothing).
 */
import type { OrderView } from "@paykit/testkit"
import { describe, expect, it } from "vitest"
import { audit } from "../src/chaos/audit"
import { Ledger } from "../src/chaos/ledger"
import { planPayments, type PlannedPayment } from "../src/chaos/plan"
import { chaosLine, runChaos } from "../src/chaos/run"

const SEED = Number(process.env["PAYKIT_CHAOS_SEED"] ?? 20261122)

describe("chaos (500 payments over loopback HTTP, faults, restart from a snapshot)", () => {
  it("no double charge, no lost outcome, no unexpected error", { timeout: 60_000 }, async () => {
    const report = await runChaos({ payments: 500, concurrency: 32, seed: SEED })
    const context = `${chaosLine(report)} (seed ${SEED}; lost: ${report.lostExamples.join("; ")}; unexpected: ${JSON.stringify(report.unexpectedExamples)})`
    expect(report.payments, context).toBe(500)
    expect(report.doubleCharges, context).toBe(0)
    expect(report.doubleRefunds, context).toBe(0)
    expect(report.lostOutcomes, context).toBe(0)
    expect(report.unexpectedErrors, context).toBe(0)
    expect(report.beliefConflicts, context).toBe(0)
    expect(report.orphanOrders, context).toBe(0)
    expect(report.callbacksUndelivered, context).toBe(0)
    // The chaos really happened: 500s and dropped connections on the wire, a misbehaving callback
    // front, callbacks delivered more than once, and a restart.
    expect(report.wire.byStatus["500"] ?? 0).toBeGreaterThan(0)
    expect(Object.values(report.wire.errors).reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    expect(report.front["lost"]).toBeGreaterThan(0)
    expect(report.front["duplicated"]).toBeGreaterThan(0)
    expect(report.front["heldBack"]).toBeGreaterThan(0)
    // Every callback the front received was a logged attempt of the live instance, except those
    // under way at the restart: the old instance may have delivered them unlogged (the snapshot
    // queued them again, so the new instance delivers and logs them too).
    expect(report.callbackAttempts + report.restart.callbacksInFlight).toBeGreaterThanOrEqual(report.front["received"]!)
    expect(report.transactionsChecked).toBeGreaterThan(500)
    // The restart was real: a new instance built from a snapshot carrying orders and pending work,
    // and the audited instance (the one alive at the end) holds those orders plus the later ones.
    expect(report.restart.orders).toBeGreaterThan(0)
    expect(report.restart.pendingJobs).toBeGreaterThan(0)
    expect(report.ordersInSimulator).toBeGreaterThan(report.restart.orders)
    expect(report.elapsedMs).toBeLessThan(60_000)
  })
})

describe("the chaos audit can fail", () => {
  const plan: PlannedPayment[] = planPayments(1, 7).map(({ rebillClientOrderId: _r, ...p }) => ({ ...p, flow: "sale" as const }))
  const id = plan[0]!.clientOrderId
  const order = (over: Partial<OrderView>): OrderView => ({
    orderid: "1000001",
    client_orderid: id,
    endpointId: 1001,
    kind: "sale",
    status: "approved",
    amount: "10.00",
    currency: "USD",
    captured: "0.00",
    returned: "0.00",
    settled: false,
    transactions: [{ type: "sale", status: "approved", serialNumber: "s1", at: 0 }],
    ...over
  })
  const sale = { type: "sale", status: "approved", serialNumber: "s", at: 0 }
  const ret = { type: "return", status: "approved", serialNumber: "r", at: 1 }

  it("counts a second order and a second charge under one client_orderid", () => {
    const ledger = new Ledger()
    ledger.learn(id, "sale", "approved", "await")
    expect(audit(plan, [order({}), order({ orderid: "1000002" })], [], ledger, []).doubleCharges).toBe(1)
    expect(audit(plan, [order({ transactions: [sale, sale] })], [], ledger, []).doubleCharges).toBe(1)
    expect(audit(plan, [order({ transactions: [sale, ret, ret] })], [], ledger, []).doubleRefunds).toBe(1)
    expect(audit(plan, [order({})], [], ledger, []).doubleCharges).toBe(0)
  })

  it("counts an outcome never learned, a wrong belief and a payment that never arrived", () => {
    const none = new Ledger()
    expect(audit(plan, [order({})], [], none, []).lostOutcomes).toBe(1)
    const wrong = new Ledger()
    wrong.learn(id, "sale", "declined", "callback")
    expect(audit(plan, [order({})], [], wrong, []).lostOutcomes).toBe(1)
    expect(audit(plan, [], [], wrong, []).lostOutcomes).toBe(1)
    const right = new Ledger()
    right.learn(id, "sale", "approved", "callback")
    expect(audit(plan, [order({})], [], right, []).lostOutcomes).toBe(0)
  })

  it("counts an undelivered callback and a conflicting belief", () => {
    const ledger = new Ledger()
    ledger.learn(id, "sale", "approved", "await")
    ledger.learn(id, "sale", "declined", "callback")
    const attempt = { orderid: "1000001", client_orderid: id, status: "approved", url: "http://127.0.0.1/cb", attempt: 1, at: 0 }
    expect(audit(plan, [order({})], [{ ...attempt, outcome: 500 }], ledger, []).callbacksUndelivered).toBe(1)
    expect(audit(plan, [order({})], [{ ...attempt, outcome: 200 }], ledger, []).callbacksUndelivered).toBe(0)
    expect(ledger.conflicts).toBe(1)
  })
})
