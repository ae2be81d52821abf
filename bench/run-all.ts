/**
 * `pnpm bench [names]`: runs every benchmark under bench/ one after another (never in parallel, so
 * they do not steal each other's cores). Each bench prints its figures beside a baseline measured
 * in the same run, and a JSON line last; this runner collects those lines into bench/results.json.
 *
 * Every bench's JSON line carries `goals: { "<what>": { "goal": x, "ratio": y, "met": true|false } }`
 * (docs/decisions.md#25-verdict-lines); a goal may add fields of its own
 * (`wallRatio`, `unit`, `lowerIsBetter`, ...), and `met` is the bench's own verdict. The runner
 * gathers them under `goals` in results.json, prints them as one table, and ends with one verdict
 * line; it exits 1 when a bench failed, printed no goals, or missed one.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** One goal as a bench reports it. */
export interface Goal {
  readonly goal: number
  readonly ratio: number
  readonly met: boolean
  readonly [extra: string]: unknown
}

/** The goals of a bench's JSON line, or why they are not usable. */
export function goalsOf(report: unknown): { goals: Record<string, Goal> } | { problem: string } {
  const goals = (report as { goals?: unknown } | null)?.goals
  if (typeof goals !== "object" || goals === null || Array.isArray(goals)) return { problem: "no goals in its JSON line" }
  const out: Record<string, Goal> = {}
  for (const [what, g] of Object.entries(goals)) {
    const { goal, ratio, met } = (g ?? {}) as Record<string, unknown>
    if (typeof goal !== "number" || typeof ratio !== "number" || typeof met !== "boolean") {
      return { problem: `goal "${what}" is not { goal: number, ratio: number, met: boolean }` }
    }
    out[what] = g as Goal
  }
  if (Object.keys(out).length === 0) return { problem: "an empty goals object" }
  return { goals: out }
}

const here = dirname(fileURLToPath(import.meta.url))

function main(): void {
  const only = process.argv.slice(2)
  const benches = readdirSync(here, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== "node_modules")
    .flatMap((d) => readdirSync(join(here, d.name)).filter((f) => f.endsWith(".bench.ts")).map((f) => join(d.name, f)))
    .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
    .sort()

  console.log(`PayKit benchmarks — Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "unknown cpu"})`)
  const results: Record<string, unknown> = {}
  const goals: Record<string, Record<string, Goal>> = {}
  const problems: Array<string> = []
  const load = (): Array<number> => loadavg().map((l) => Number(l.toFixed(2)))
  const runs: Record<string, { seconds: number; exitCode: number | null; loadBefore: Array<number>; loadAfter: Array<number> }> = {}
  for (const bench of benches) {
    console.log(`\n=== ${bench} === (load average ${load().join(", ")})`)
    const loadBefore = load()
    const started = performance.now()
    const run = spawnSync(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", join(here, bench)], {
      cwd: join(here, ".."),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 64 * 1024 * 1024
    })
    process.stdout.write(run.stdout)
    runs[bench] = { seconds: Number(((performance.now() - started) / 1000).toFixed(1)), exitCode: run.status, loadBefore, loadAfter: load() }
    if (run.status !== 0) problems.push(`${bench} exited ${run.status ?? run.signal}`)
    const json = run.stdout.split("\n").filter((l) => l.startsWith("{")).at(-1)
    let report: unknown
    if (json) {
      try {
        report = JSON.parse(json)
      } catch {
        report = { unparsed: json }
      }
      results[bench] = report
    }
    const found = goalsOf(report)
    if ("problem" in found) problems.push(`${bench}: ${found.problem}`)
    else {
      goals[bench] = found.goals
      for (const [what, g] of Object.entries(found.goals)) if (!g.met) problems.push(`${bench}: "${what}" ${g.ratio} against a goal of ${g.goal}`)
    }
  }
  if (benches.length === 0) console.log("no benchmarks found")

  const all = Object.entries(goals).flatMap(([bench, gs]) => Object.entries(gs).map(([what, g]) => ({ bench, what, ...g })))
  if (all.length > 0) {
    console.log("\ngoals")
    for (const g of all) console.log(`  ${g.met ? "met    " : "NOT MET"}  ${g.ratio} (goal ${g.goal})  ${g.bench}: ${g.what}`)
  }
  const out = join(here, "results.json")
  writeFileSync(out, JSON.stringify({
    node: process.version,
    cores: cpus().length,
    at: new Date().toISOString(),
    runs,
    goals,
    allGoalsMet: problems.length === 0,
    problems,
    results
  }, null, 2) + "\n")
  console.log(`\nwrote ${out}${existsSync(out) ? "" : " (failed)"}`)
  for (const p of problems) console.log(`  - ${p}`)
  const met = all.filter((g) => g.met).length
  console.log(`bench: ${benches.length} benches, goals met ${met}/${all.length}, ${problems.length === 0 ? "clean" : `${problems.length} problem${problems.length === 1 ? "" : "s"}`}`)
  process.exit(problems.length === 0 ? 0 : 1)
}

// Imported (by a test of the goals format) it only exports; run directly it runs the benches.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
