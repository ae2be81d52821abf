/**
 * `pnpm bench`: runs every benchmark under bench/ one after another (never in parallel, so they do
 * not steal each other's cores). Each bench prints its figures beside a baseline measured in the
 * same run, and a JSON line; this runner collects the JSON lines into bench/results.json.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const only = process.argv.slice(2)
const benches = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== "node_modules")
  .flatMap((d) => readdirSync(join(here, d.name)).filter((f) => f.endsWith(".bench.ts")).map((f) => join(d.name, f)))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()

console.log(`PayKit benchmarks — Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "unknown cpu"})`)
const results: Record<string, unknown> = {}
let failed = 0
for (const bench of benches) {
  console.log(`\n=== ${bench} ===`)
  const run = spawnSync(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", join(here, bench)], {
    cwd: join(here, ".."),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024
  })
  process.stdout.write(run.stdout)
  if (run.status !== 0) failed++
  const json = run.stdout.split("\n").filter((l) => l.startsWith("{")).at(-1)
  if (json) {
    try {
      results[bench] = JSON.parse(json)
    } catch {
      results[bench] = { unparsed: json }
    }
  }
}
if (benches.length === 0) console.log("no benchmarks found")
const out = join(here, "results.json")
writeFileSync(out, JSON.stringify({ node: process.version, cores: cpus().length, at: new Date().toISOString(), results }, null, 2) + "\n")
console.log(`\nwrote ${out}${existsSync(out) ? "" : " (failed)"}`)
process.exit(failed > 0 ? 1 : 0)
