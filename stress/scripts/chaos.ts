/**
 * Chaos run: `node --conditions=@paykit/source --import tsx stress/scripts/chaos.ts
 *   --payments 10000 --concurrency 64 --seed 1`
 * Prints progress, the figures, then the verdict line (payments, double charges, lost outcomes,
 * unexpected errors, amount mismatches, invariant violations, fault-matrix cases met and their
 * kinds), then ONE JSON line; exits 1 when
 * any count of the verdict (or double refunds, belief conflicts) is not 0.
 */
import { parseArgs } from "node:util"
import { chaosClean, chaosLine, runChaos } from "../src/chaos/run"

const { values } = parseArgs({
  options: {
    payments: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "64" },
    seed: { type: "string", default: "1" }
  }
})
const num = (name: string, text: string | undefined): number => {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`--${name} must be a non-negative integer`)
  return n
}
const options = { payments: num("payments", values.payments), concurrency: num("concurrency", values.concurrency), seed: num("seed", values.seed) }
console.log(`chaos: ${options.payments} payments, concurrency ${options.concurrency}, seed ${options.seed}`)
const report = await runChaos({ ...options, log: (line) => console.log(`  ${line}`) })
console.log(`  double refunds ${report.doubleRefunds}, belief conflicts ${report.beliefConflicts}, orphan orders ${report.orphanOrders}, callbacks undelivered ${report.callbacksUndelivered}`)
console.log(`  ${report.transactionsChecked} transactions checked in ${report.ordersInSimulator} orders, ${report.callbackAttempts} callback attempts, ${(report.elapsedMs / 1000).toFixed(1)} s`)
console.log(`  transient failures ridden out: ${JSON.stringify(report.transient)}; learned by: ${JSON.stringify(report.learnedBy)}`)
console.log(`  delicate paths: ${JSON.stringify(report.paths)}`)
console.log(`  fault-matrix cases met (operation × fault × merchant reaction): ${JSON.stringify(report.cases)}`)
console.log(`  wire (client→simulator): replies ${JSON.stringify(report.wire.byStatus)}, failures ${JSON.stringify(report.wire.errors)}`)
console.log(`  callback attempts by outcome: ${JSON.stringify(report.callbackOutcomes)}`)
console.log(`  callback front: ${JSON.stringify(report.front)}`)
console.log(`  restart from a snapshot: ${report.restartMs} ms; carried ${report.restart.orders} orders, ${report.restart.pendingJobs} pending jobs (${report.restart.callbackJobs} callbacks, ${report.restart.callbacksInFlight} under way), ${report.restart.nonces} nonces (${report.restart.snapshotBytes} bytes of JSON)`)
for (const line of report.lostExamples) console.log(`  lost: ${line}`)
for (const e of report.unexpectedExamples) console.log(`  unexpected: ${JSON.stringify(e)}`)
console.log(`  money: ${report.money.ordersCompared} orders compared (${report.money.ordersMismatched} differ, ${report.money.totalsMismatched} currency totals differ); totals ${JSON.stringify(report.money.totals)}`)
for (const line of report.money.examples) console.log(`  amount mismatch: ${line}`)
console.log(`  invariants: ${report.invariantCheckpoints} checkpoints (every ${Math.max(1, Math.floor(options.payments / 20))} payments, around the restart, at the end), ${report.invariantViolations} violations`)
for (const line of report.invariantExamples) console.log(`  invariant: ${line}`)
console.log(chaosLine(report))
console.log(JSON.stringify({ bench: "chaos", verdict: chaosLine(report), ...report }))
process.exit(chaosClean(report) ? 0 : 1)
