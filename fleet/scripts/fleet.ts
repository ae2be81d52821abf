/**
 * `pnpm fleet [--workers 4] [--payments 1000] [--seed N] [--kills K] [--faults default|none|all]
 *   [--db-stalls N] [--db-stall-ms MIN-MAX] [--retention N|off] [--retention-ms MS|off] [--back-office P] [--late-sends P]
 *   [--late-ops LIST] [--late-ms MS] [--lost-replies P] [--lost-ops LIST] [--replays N] [--keep DIR]`
 *
 * W merchant worker processes on one PostgreSQL (a temporary server started and stopped here, unless
 * `PAYKIT_DATABASE_URL` or --database-url names one: a fresh database is then created on it and
 * dropped at the end), one simulator process, a callback proxy that spreads, duplicates and reorders
 * callbacks, SIGKILLs at seeded points, and the faults (fleet/src/faults.ts). Prints progress, the
 * figures, and last the verdict line; exits 1 when it is not clean.
 *
 * The database URL holds a password: give it in `PAYKIT_DATABASE_URL`. A `--database-url` is in
 * argv, which `ps` shows and pnpm echoes before this script runs; the script says so, and masks the
 * password in everything it prints itself (and in its own process title).
 */
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { describeFaults, parseOperations, PRESETS, type FleetFaults } from "../src/faults"
import { defaultKills, fleetClean, fleetLine, runFleet } from "../src/run"
import { masker, maskUrl, passwordOf } from "../src/secrets"

const usage = [
  "pnpm fleet [--workers 4] [--payments 1000] [--seed N] [--kills K] [--keep DIR]",
  "           [--faults default|none|all] [--db-stalls N] [--db-stall-ms MIN-MAX] [--retention N|off] [--retention-ms MS|off] [--back-office P]",
  "           [--late-sends P] [--late-ops sale,preauth,capture,return] [--late-ms MS] [--lost-replies P] [--lost-ops LIST] [--replays N]",
  "  the database: PAYKIT_DATABASE_URL=postgres://... (or --database-url URL, visible to ps), else a temporary PostgreSQL server"
].join("\n")
const refuse = (reason: string): never => {
  console.error(`fleet: ${reason}\nusage: ${usage}`)
  process.exit(2)
}
const optionNames = [
  "workers", "payments", "seed", "kills", "database-url", "keep", "faults", "db-stalls", "db-stall-ms", "retention", "retention-ms", "back-office",
  "late-sends", "late-ops", "late-ms", "lost-replies", "lost-ops", "replays"
] as const
type Values = Partial<Record<(typeof optionNames)[number], string>>
let values: Values = {}
try {
  values = parseArgs({ options: Object.fromEntries(optionNames.map((n) => [n, { type: "string" }])) as Record<(typeof optionNames)[number], { type: "string" }> }).values as Values
} catch (error) {
  // parseArgs quotes what it could not take, which may be the URL: mask it.
  refuse(masker(process.argv.filter((a) => a.includes("://")))(error instanceof Error ? error.message : String(error)))
}
const flagUrl = values["database-url"]
const databaseUrl = flagUrl ?? (process.env["PAYKIT_DATABASE_URL"] === "" ? undefined : process.env["PAYKIT_DATABASE_URL"])
const mask = masker([databaseUrl])
if (flagUrl !== undefined) {
  // Our own argv, as `ps` shows it: the URL's password masked (pnpm's processes above us still show it).
  process.title = mask(process.argv.join(" "))
}
const num = (name: string, text: string | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  if (text === undefined) return fallback
  const n = Number(text)
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : refuse(`--${name} must be an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? "" : ` to ${max}`}`)
}
const share = (name: string, text: string | undefined, fallback: number): number => {
  if (text === undefined) return fallback
  const n = Number(text)
  return text.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= 1 ? n : refuse(`--${name} must be a share from 0 to 1`)
}
const operations = (name: string, text: string | undefined, fallback: FleetFaults["lateSendOps"]): FleetFaults["lateSendOps"] => {
  if (text === undefined) return fallback
  const parsed = parseOperations(text)
  return typeof parsed === "string" ? refuse(`--${name}: ${parsed.toLowerCase()} is not one of sale, preauth, capture, return`) : parsed
}
if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) refuse(`${flagUrl !== undefined ? "--database-url" : "PAYKIT_DATABASE_URL"} must be a postgres:// URL`)
const preset = PRESETS[values.faults ?? "default"] ?? refuse("--faults must be default, none or all")
const stallRange = (text: string | undefined): readonly [number, number] => {
  if (text === undefined) return preset.dbStallMs
  const m = /^(\d{1,6})-(\d{1,6})$/.exec(text)
  const [min, max] = m === null ? [Number.NaN, Number.NaN] : [Number(m[1]), Number(m[2])]
  return min >= 1 && max >= min ? [min, max] : refuse("--db-stall-ms must be MIN-MAX in ms, 1 <= MIN <= MAX")
}
const faults: FleetFaults = {
  dbStalls: num("db-stalls", values["db-stalls"], preset.dbStalls, 0),
  dbStallMs: stallRange(values["db-stall-ms"]),
  retention: values.retention === "off" ? undefined : values.retention === undefined ? preset.retention : num("retention", values.retention, 0, 1),
  retentionMs: values["retention-ms"] === "off" ? undefined : values["retention-ms"] === undefined ? preset.retentionMs : num("retention-ms", values["retention-ms"], 0, 1000),
  backOffice: share("back-office", values["back-office"], preset.backOffice),
  lateSends: share("late-sends", values["late-sends"], preset.lateSends),
  lateSendOps: operations("late-ops", values["late-ops"], preset.lateSendOps),
  lateSendMs: num("late-ms", values["late-ms"], preset.lateSendMs, 1, 600_000),
  lostReplies: share("lost-replies", values["lost-replies"], preset.lostReplies),
  lostReplyOps: operations("lost-ops", values["lost-ops"], preset.lostReplyOps),
  replays: num("replays", values.replays, preset.replays, 0)
}
// Ctrl-C or a CI timeout: exit through process.exit so the temporary server's exit hook stops it;
// the workers and the simulator exit when their IPC channel closes.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130))

const options = {
  workers: num("workers", values.workers, 4, 1),
  payments: num("payments", values.payments, 1000, 1),
  seed: num("seed", values.seed, 1, 0),
  kills: values.kills === undefined ? undefined : num("kills", values.kills, 0, 0),
  databaseUrl,
  faults,
  // pnpm runs the script in the package's directory: a relative --keep is where pnpm was started.
  keep: values.keep === undefined ? undefined : resolve(process.env["INIT_CWD"] ?? process.cwd(), values.keep)
}
const where = databaseUrl === undefined ? "a temporary PostgreSQL server" : `the server of ${maskUrl(databaseUrl)}`
console.log(`fleet: ${options.payments} payments, ${options.workers} workers, ${options.kills ?? defaultKills(options.payments)} kills planned, seed ${options.seed}, ${where}`)
console.log(`  faults: ${describeFaults(faults)}`)
if (flagUrl !== undefined && passwordOf(flagUrl) !== undefined) {
  console.log("  note: the password in --database-url is in argv (ps, pnpm's echo); PAYKIT_DATABASE_URL keeps it out of both")
}
const r = await runFleet({ ...options, log: (line) => console.log(`  ${line}`) }).catch((error: unknown) => {
  // Everything the run started is stopped by then (its finally); say why, without a stack.
  console.error(`fleet: the run could not complete: ${mask(error instanceof Error ? error.message : String(error))}`)
  return process.exit(1)
})
const out = (line: string) => console.log(mask(line))
out(`  kills by point: ${JSON.stringify(r.killsByPoint)}; worker crashes (not kills): ${r.workerCrashes}; worker starts ${r.workerStartMs.starts} (until up: median ${r.workerStartMs.median} ms, max ${r.workerStartMs.max} ms)`)
out(`  intents taken up again (after a kill, by a retry with the same key or recover()): ${r.intentsTakenUpAgain}`)
out(`  recover() at worker starts: ${JSON.stringify(r.recovered)}; final recover(): ${JSON.stringify(r.finalRecover)}`)
out(`  transient failures ridden out: ${JSON.stringify(r.transient)}`)
out(`  money calls ${r.calls.calls}: ${JSON.stringify(r.calls.byTag)}; past their deadline (by more than 1 s) ${r.calls.pastDeadline}${r.calls.pastDeadline > 0 ? ` (longest ${r.calls.longestOverMs} ms)` : ""}`)
out(`  database stalls ${r.dbStalls.made}/${r.dbStalls.planned} (${(r.dbStalls.stalledMs / 1000).toFixed(1)} s stalled); orders the gateway forgot ${r.forgottenOrders}`)
out(`  back-office captures: ${r.backOffice.sent}/${r.backOffice.planned} sent ${JSON.stringify(r.backOffice.byAnswer)}, ${r.backOfficeCaptures} approved at the gateway; captures beside them the handler left unconfirmed ${r.unprovenBesideBackOffice}`)
out(`  key replays after restarts ${r.replays.replays}: ${JSON.stringify(r.replays.byTag)}, ${r.replays.sent} of them sent to the gateway`)
for (const line of r.replays.sentExamples) out(`    replay that sent: ${line}`)
out(`  jobs ended: conflict ${r.jobsConflict}, unknown ${r.jobsUnknown} (settled since ${r.unknownSettled}), order forgotten ${r.jobsForgotten}; conflicts recorded in the store ${r.conflictsRecorded}`)
out(`  unknown for a person: recorded by recover() (order-not-found too late to prove anything) ${r.unknownRecorded.total} (the gateway had the order ${r.unknownRecorded.orderAtGateway}, never ${r.unknownRecorded.neverAtGateway}); payments the gateway never made whose job left them unknown ${r.unknownNeverMade}`)
out(`  callback proxy: ${JSON.stringify(r.proxy)}`)
out(`  onCallback runs ${r.callbackRuns}, re-runs after a crash absorbed by the unique key ${r.reRunsAfterCrash}, re-runs under another run's live lease ${r.reRunsUnderLease}`)
out(`  amount mismatches ${r.amountMismatches}, orders nobody planned ${r.orphanOrders}, failed jobs ${r.failedJobs}, simulator invariant violations ${r.invariantViolations}`)
for (const line of r.unexpected) out(`  unexpected: ${line}`)
for (const line of r.findings) out(`  finding: ${line}`)
for (const line of r.examples) out(`  finding: ${line}`)
if (r.keptIn !== undefined) out(`  evidence kept in ${r.keptIn} (database, orders, callbacks, snapshot, report)`)
out(`  ${(r.elapsedMs / 1000).toFixed(1)} s`)
out(fleetLine(r))
process.exit(fleetClean(r) ? 0 : 1)
