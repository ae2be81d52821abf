/**
 * Cold start: how long a fresh process takes to load PayKit, beside `stripe` in the same run.
 *
 *   node --import tsx bench/coldstart/coldstart.bench.ts [--rounds N] [--json-only]
 *
 * A scratch project under the system temp dir (kept between runs, keyed by the stripe version)
 * holds `stripe` installed from npm and the five built @paykit packages linked from this workspace
 * (their `dist/`, as a published package has it; built first by turbo, a cache hit after
 * `pnpm build`). Each round starts one fresh Node process per contender, interleaved so that
 * load from other processes falls on all of them alike, and each process times its own import
 * (`performance.now()` around `await import(...)` / `require(...)`): `stripe` (ESM and CJS),
 * `@paykit/client` (ESM and CJS), `@paykit/signing` (ESM), and for the breakdown `@paykit/contracts`
 * (its Effect Schemas) and `@paykit/contracts/operations`; `paykit sign` is the wall time of the
 * whole command (process start to exit, signing the gateway's published sale example), with a bare
 * `node -e 0` beside it. Figures are medians over the rounds.
 *
 * Goals (decision 22): client ≤ 1.5× stripe (ESM against stripe's ESM, CJS against its CJS),
 * signing ≤ 0.3× stripe (ESM), `paykit sign` ≤ 300 ms. The JSON line last carries them in
 * bench/run-all.ts's format (`ratio` = the figure; lower is better).
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const STRIPE = "23.1.0"
const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../..")
const argv = process.argv.slice(2)
const jsonOnly = argv.includes("--json-only")
const rounds = Number(argv[argv.indexOf("--rounds") + 1] ?? 0) || 9
const log = (line: string) => {
  if (!jsonOnly) console.log(line)
}

// 1. the built packages and the scratch project
const pnpm = (args: Array<string>, cwd: string) => {
  const execpath = process.env["npm_execpath"] ?? ""
  return /pnpm\.c?js$/.test(execpath)
    ? execFileSync(process.execPath, [execpath, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
    : execFileSync("npx", ["-y", "pnpm@10.34.9", ...args], { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
}
pnpm(["exec", "turbo", "run", "build", "--filter=./packages/*", "--output-logs=errors-only"], root)
const scratch = join(tmpdir(), `paykit-bench-coldstart-stripe-${STRIPE}`)
if (!existsSync(join(scratch, "node_modules", "stripe", "package.json"))) {
  rmSync(scratch, { recursive: true, force: true })
  mkdirSync(scratch, { recursive: true })
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "coldstart-scratch", private: true, dependencies: { stripe: STRIPE } }))
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: scratch, stdio: ["ignore", "pipe", "pipe"] })
}
mkdirSync(join(scratch, "node_modules", "@paykit"), { recursive: true })
for (const p of ["contracts", "signing", "client", "testkit", "cli"]) {
  const link = join(scratch, "node_modules", "@paykit", p)
  rmSync(link, { force: true, recursive: true })
  symlinkSync(join(root, "packages", p), link)
}

// 2. the contenders: each prints the ms its import took
const esm = (specifier: string) => [
  "--input-type=module",
  "-e",
  `const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t)`
]
const cjs = (specifier: string) => ["-e", `const t = performance.now(); require(${JSON.stringify(specifier)}); console.log(performance.now() - t)`]
const signArgs = [
  join(root, "packages", "cli", "bin", "paykit.js"),
  "sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com",
  "--endpoint-id", "1111", "--key", "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"
]
type Contender = { readonly name: string; readonly args: Array<string>; readonly wall?: boolean; readonly expect?: string }
const contenders: Array<Contender> = [
  { name: "stripe (ESM)", args: esm("stripe") },
  { name: "@paykit/client (ESM)", args: esm("@paykit/client") },
  { name: "stripe (CJS)", args: cjs("stripe") },
  { name: "@paykit/client (CJS)", args: cjs("@paykit/client") },
  { name: "@paykit/signing (ESM)", args: esm("@paykit/signing") },
  // where the client's time goes (no goal): the contracts' Effect Schemas, and the table alone
  { name: "@paykit/contracts (ESM)", args: esm("@paykit/contracts") },
  { name: "@paykit/contracts/operations (ESM)", args: esm("@paykit/contracts/operations") },
  { name: "paykit sign (whole process)", args: signArgs, wall: true, expect: "c6bdd88a78834ef4b863b088827a459f039e8257" },
  { name: "node -e 0 (whole process)", args: ["-e", "0"], wall: true }
]
// the installed bin runs dist/ only where there is no src/ beside it or no tsx to run it with:
// here (a workspace package) the launcher would pick the sources, so run dist/cli.js as a published
// package's launcher does
signArgs[0] = join(root, "packages", "cli", "dist", "cli.js")

const samples = new Map<string, Array<number>>(contenders.map((c) => [c.name, []]))
for (let round = 0; round < rounds + 1; round++) {
  for (const c of contenders) {
    const started = performance.now()
    const run = spawnSync(process.execPath, c.args, { cwd: scratch, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } })
    const wall = performance.now() - started
    if (run.status !== 0) throw new Error(`${c.name} failed: ${run.stderr}`)
    if (c.expect !== undefined && run.stdout.trim() !== c.expect) throw new Error(`${c.name} printed ${run.stdout}`)
    // round 0 warms the file system cache and is not counted
    if (round > 0) samples.get(c.name)!.push(c.wall ? wall : Number(run.stdout.trim()))
  }
}
const median = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const ms = Object.fromEntries([...samples].map(([k, v]) => [k, Number(median(v).toFixed(1))]))
const r = (a: number, b: number) => Number((a / b).toFixed(3))
const ratios = {
  clientEsm: r(ms["@paykit/client (ESM)"]!, ms["stripe (ESM)"]!),
  clientCjs: r(ms["@paykit/client (CJS)"]!, ms["stripe (CJS)"]!),
  signing: r(ms["@paykit/signing (ESM)"]!, ms["stripe (ESM)"]!)
}
const sign = ms["paykit sign (whole process)"]!

log(`cold start — Node ${process.version}, ${rounds} rounds, medians (stripe ${STRIPE} from npm in ${scratch})`)
for (const [name, v] of Object.entries(ms)) {
  const against = name.startsWith("@paykit/client (CJS)") ? ms["stripe (CJS)"]! : name.startsWith("@paykit/") ? ms["stripe (ESM)"]! : undefined
  log(`  ${name.padEnd(36)} ${v.toFixed(1).padStart(8)} ms${against !== undefined ? `   ${r(v, against)}× stripe` : ""}`)
}
const goals = {
  "@paykit/client ESM import <= 1.5x stripe": { goal: 1.5, ratio: ratios.clientEsm, met: ratios.clientEsm <= 1.5, lowerIsBetter: true },
  "@paykit/client CJS require <= 1.5x stripe": { goal: 1.5, ratio: ratios.clientCjs, met: ratios.clientCjs <= 1.5, lowerIsBetter: true },
  "@paykit/signing import <= 0.3x stripe": { goal: 0.3, ratio: ratios.signing, met: ratios.signing <= 0.3, lowerIsBetter: true },
  "paykit sign <= 300 ms": { goal: 300, ratio: sign, met: sign <= 300, lowerIsBetter: true, unit: "ms" }
}
for (const [what, g] of Object.entries(goals)) log(`  ${g.met ? "met    " : "NOT MET"} ${what}: ${g.ratio}`)
console.log(JSON.stringify({ bench: "coldstart", node: process.version, rounds, stripe: STRIPE, ms, ratios, goals }))
