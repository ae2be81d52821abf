/**
 * The full chaos run: 10,000 payments of mixed flows through the client against the simulator over
 * loopback HTTP, with faults, a misbehaving callback receiver and a simulator restart (see
 * stress/README.md). It spawns stress/scripts/chaos.ts (so the stress workspace resolves its own
 * dependencies), forwards its figures and its verdict line (`payments N, double charges 0, lost
 * outcomes 0, unexpected errors 0, amount mismatches 0, invariant violations 0`), then prints ONE
 * JSON line with the verdict and its counts. Its baseline is itself: every count must be 0.
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/stress/chaos.bench.ts
 * PAYKIT_BENCH_QUICK=1 → 2,000 payments. PAYKIT_CHAOS_PAYMENTS / _CONCURRENCY / _SEED override.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const quick = process.env["PAYKIT_BENCH_QUICK"] === "1"
const payments = process.env["PAYKIT_CHAOS_PAYMENTS"] ?? (quick ? "2000" : "10000")
const concurrency = process.env["PAYKIT_CHAOS_CONCURRENCY"] ?? "64"
const seed = process.env["PAYKIT_CHAOS_SEED"] ?? "1"

const run = spawnSync(
  process.execPath,
  ["--conditions=@paykit/source", "--import", "tsx", join(root, "stress", "scripts", "chaos.ts"), "--payments", payments, "--concurrency", concurrency, "--seed", seed],
  { cwd: join(root, "stress"), encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 }
)
const lines = run.stdout.split("\n")
for (const line of lines) if (!line.startsWith("{") && line !== "") console.log(line)
const json = lines.filter((l) => l.startsWith("{")).at(-1)
const report = json === undefined ? { error: "chaos script printed no JSON" } : (JSON.parse(json) as Record<string, unknown>)
// The fault-matrix suffix (cases met, kinds) counts what the zeros before it held over, not failures.
const VERDICT = /^payments (\d+), double charges (\d+), lost outcomes (\d+), unexpected errors (\d+), amount mismatches (\d+), invariant violations (\d+)(?:, fault cases (\d+) of (\d+) kinds)?$/
const verdictLine = lines.find((l) => VERDICT.test(l))
const counts = verdictLine === undefined ? undefined : VERDICT.exec(verdictLine)!.slice(1).map(Number)
const verdict = counts === undefined
  ? { verdict: "no verdict line", clean: false }
  : {
      verdict: verdictLine,
      clean: counts.slice(1, 6).every((n) => n === 0),
      counts: { payments: counts[0], doubleCharges: counts[1], lostOutcomes: counts[2], unexpectedErrors: counts[3], amountMismatches: counts[4], invariantViolations: counts[5], faultCases: counts[6], faultCaseKinds: counts[7] }
    }
// Goals of a verdict: each count must be 0 (`ratio` is the count seen, lower is better).
const goals: Record<string, { goal: number; ratio: number; met: boolean; lowerIsBetter: true }> = {}
const countGoal = (what: string, seen: number | undefined) => {
  const n = seen ?? Number.NaN
  goals[what] = { goal: 0, ratio: n, met: n === 0, lowerIsBetter: true }
}
const c = (verdict as { counts?: Record<string, number> }).counts
countGoal("double charges", c?.["doubleCharges"])
countGoal("lost outcomes", c?.["lostOutcomes"])
countGoal("unexpected errors", c?.["unexpectedErrors"])
countGoal("amount mismatches", c?.["amountMismatches"])
countGoal("invariant violations", c?.["invariantViolations"])
// NaN is not JSON: a run without a verdict line reports -1 (and not met).
for (const g of Object.values(goals)) if (Number.isNaN(g.ratio)) g.ratio = -1
console.log(JSON.stringify({ goals, bench: "stress/chaos", command: `node --conditions=@paykit/source --import tsx stress/scripts/chaos.ts --payments ${payments} --concurrency ${concurrency} --seed ${seed}`, exitCode: run.status, ...report, ...verdict }))
process.exit(run.status === 0 && verdict.clean ? 0 : 1)
