/**
 * Hostile traffic beside normal traffic against a shared-sandbox simulator, and the same normal
 * traffic alone as the same-run baseline (see stress/scripts/hostile.ts and stress/README.md). It
 * spawns the stress script (so the stress workspace resolves its own dependencies), forwards its
 * lines, and prints its JSON line with `goals`: normal traffic's error rate 0 under hostile
 * traffic, the server's peak heap within 2× the plain run's, no connection aimed beyond loopback.
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/stress/hostile.bench.ts
 * PAYKIT_BENCH_QUICK=1 → 8 s per run and no unbounded run (20 s and a third, unbounded run
 * otherwise); PAYKIT_HOSTILE_SECONDS overrides.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const quick = process.env["PAYKIT_BENCH_QUICK"] === "1"
const seconds = process.env["PAYKIT_HOSTILE_SECONDS"] ?? (quick ? "8" : "20")
// The full bench also runs the hostile traffic against an unbounded edge, for comparison.
const args = ["--seconds", seconds, ...(quick ? [] : ["--unbounded"])]
const run = spawnSync(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", join(root, "stress", "scripts", "hostile.ts"), ...args], {
  cwd: join(root, "stress"),
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
  maxBuffer: 64 * 1024 * 1024
})
process.stdout.write(run.stdout)
if (!run.stdout.split("\n").some((l) => l.startsWith("{"))) console.log(JSON.stringify({ bench: "stress/hostile", error: "the hostile script printed no JSON", exitCode: run.status }))
process.exit(run.status ?? 1)
