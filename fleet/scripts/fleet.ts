/**
 * `pnpm fleet [--workers 4] [--payments 1000] [--seed N] [--database-url URL] [--kills K]`
 *
 * W merchant worker processes on one PostgreSQL (a temporary server started and stopped here, unless
 * --database-url names one: a fresh database is then created on it and dropped at the end), one
 * simulator process, a callback proxy that spreads, duplicates and reorders callbacks, and SIGKILLs
 * at seeded points. Prints progress, the figures, and last the verdict line; exits 1 when it is not clean.
 */
import { parseArgs } from "node:util"
import { defaultKills, fleetClean, fleetLine, runFleet } from "../src/run"

const usage = "pnpm fleet [--workers 4] [--payments 1000] [--seed N] [--database-url URL] [--kills K]"
const refuse = (reason: string): never => {
  console.error(`fleet: ${reason}\nusage: ${usage}`)
  process.exit(2)
}
let values: { workers?: string; payments?: string; seed?: string; kills?: string; "database-url"?: string } = {}
try {
  values = parseArgs({
    options: {
      workers: { type: "string", default: "4" },
      payments: { type: "string", default: "1000" },
      seed: { type: "string", default: "1" },
      kills: { type: "string" },
      "database-url": { type: "string" }
    }
  }).values
} catch (error) {
  refuse(error instanceof Error ? error.message : String(error))
}
const num = (name: string, text: string | undefined, min: number): number => {
  const n = Number(text)
  return Number.isSafeInteger(n) && n >= min ? n : refuse(`--${name} must be an integer of at least ${min}`)
}
if (values["database-url"] !== undefined && !/^postgres(ql)?:\/\//.test(values["database-url"])) refuse("--database-url must be a postgres:// URL")
// Ctrl-C or a CI timeout: exit through process.exit so the temporary server's exit hook stops it;
// the workers and the simulator exit when their IPC channel closes.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130))

const options = {
  workers: num("workers", values.workers, 1),
  payments: num("payments", values.payments, 1),
  seed: num("seed", values.seed, 0),
  kills: values.kills === undefined ? undefined : num("kills", values.kills, 0),
  databaseUrl: values["database-url"]
}
console.log(`fleet: ${options.payments} payments, ${options.workers} workers, ${options.kills ?? defaultKills(options.payments)} kills planned, seed ${options.seed}, ${options.databaseUrl === undefined ? "a temporary PostgreSQL server" : "the given PostgreSQL server"}`)
const r = await runFleet({ ...options, log: (line) => console.log(`  ${line}`) }).catch((error: unknown) => {
  // Everything the run started is stopped by then (its finally); say why, without a stack.
  console.error(`fleet: the run could not complete: ${error instanceof Error ? error.message : String(error)}`)
  return process.exit(1)
})
console.log(`  kills by point: ${JSON.stringify(r.killsByPoint)}; worker crashes (not kills): ${r.workerCrashes}; worker starts ${r.workerStartMs.starts} (until up: median ${r.workerStartMs.median} ms, max ${r.workerStartMs.max} ms)`)
console.log(`  intents taken up again (after a kill, by a retry with the same key or recover()): ${r.intentsTakenUpAgain}`)
console.log(`  recover() at worker starts: ${JSON.stringify(r.recovered)}; final recover(): ${JSON.stringify(r.finalRecover)}`)
console.log(`  transient failures ridden out: ${JSON.stringify(r.transient)}`)
console.log(`  callback proxy: ${JSON.stringify(r.proxy)}`)
console.log(`  onCallback runs ${r.callbackRuns}, re-runs after a crash absorbed by the unique key ${r.reRunsAfterCrash}`)
console.log(`  amount mismatches ${r.amountMismatches}, orders nobody planned ${r.orphanOrders}, failed jobs ${r.failedJobs}, simulator invariant violations ${r.invariantViolations}`)
for (const line of r.unexpected) console.log(`  unexpected: ${line}`)
for (const line of r.examples) console.log(`  finding: ${line}`)
console.log(`  ${(r.elapsedMs / 1000).toFixed(1)} s`)
console.log(fleetLine(r))
process.exit(fleetClean(r) ? 0 : 1)
