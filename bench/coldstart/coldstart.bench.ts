/**
 * Cold start: how long a fresh process takes to load PayKit, beside `stripe` in the same run.
 *
 *   node --import tsx bench/coldstart/coldstart.bench.ts [--rounds N] [--reverse] [--json-only]
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
 * `node -e 0` beside it. Figures are medians over the rounds. `--reverse` runs each round's
 * contenders in the opposite order (on a loaded machine, run both orders).
 *
 * What a cold start defers is still paid by the first call: `import + first sale` times the import
 * and one Promise `sale` (a `fetch` given to the client answers at once, so no network is timed),
 * ESM and CJS, for the record beside the import alone (no goal). `@paykit/client/promise`, the
 * Promise facade's own entry, is timed the same way (its import, ESM and CJS, and its import +
 * first sale; no goal). `effect/Effect` alone (the
 * client's own copy, ESM and CJS) is the floor of any entry that exports Effect constructors (no
 * goal).
 *
 * Goals (decision 22): client ≤ 1.5× stripe (ESM against stripe's ESM, CJS against its CJS),
 * signing ≤ 0.3× stripe (ESM), `paykit sign` ≤ 300 ms. The JSON line last carries them in
 * bench/run-all.ts's format (`ratio` = the figure; lower is better).
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const STRIPE = "23.1.0"
const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../..")
const argv = process.argv.slice(2)
const jsonOnly = argv.includes("--json-only")
const reverse = argv.includes("--reverse")
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
// effect/Effect as the client resolves it: its CommonJS file, and the ES module beside it
const effectCjs = createRequire(join(root, "packages", "client", "package.json")).resolve("effect/Effect")
const effectEsm = pathToFileURL(effectCjs.replace(/[\\/]dist[\\/]cjs[\\/]/, "/dist/esm/")).href
// import + one Promise sale through a fetch that answers at once; prints the ms, or the failure
const firstSale = (load: string) => `const t = performance.now(); const { createPayClient } = ${load};
const reply = { type: "async-response", status: "processing", "serial-number": "sn-1", "merchant-order-id": "cold-1", "paynet-order-id": "123" };
const pay = createPayClient({ baseUrl: "http://127.0.0.1:9", login: "cold", controlKey: "B17F59B4-A7DC-41B4-8FF9-37D986B43D20", endpointId: 1111,
  fetch: async () => new Response(JSON.stringify(reply), { status: 200, headers: { "Content-Type": "application/vnd.pay+json" } }) });
pay.sale({ client_orderid: "cold-1", order_desc: "Cold start", amount: "10.42", currency: "USD", address1: "1 Main St", city: "Springfield",
  zip_code: "12345", country: "US", state: "IL", phone: "5551234567", email: "john.smith@gmail.com", ipaddress: "127.0.0.1",
  card_printed_name: "JOHN SMITH", credit_card_number: "4111111111111111", expire_month: "12", expire_year: "2030", cvv2: "123",
  redirect_url: "https://shop.example.com/return" })
  .then((r) => { if (r.status !== "processing") throw new Error("unexpected reply"); console.log(performance.now() - t) }, (e) => { console.error(e); process.exit(1) })`
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
  // the Promise facade's own entry (no goal): its import, and its import + first sale
  { name: "@paykit/client/promise (ESM)", args: esm("@paykit/client/promise") },
  { name: "@paykit/client/promise (CJS)", args: cjs("@paykit/client/promise") },
  { name: "@paykit/client/promise (ESM) import + first sale", args: ["--input-type=module", "-e", firstSale('await import("@paykit/client/promise")')] },
  // what the import defers, paid by the first call (no goal)
  { name: "@paykit/client (ESM) import + first sale", args: ["--input-type=module", "-e", firstSale('await import("@paykit/client")')] },
  { name: "@paykit/client (CJS) require + first sale", args: ["-e", firstSale('require("@paykit/client")')] },
  // where the client's time goes (no goal): effect/Effect alone, the contracts' Effect Schemas, the table alone
  { name: "effect/Effect alone (ESM)", args: esm(effectEsm) },
  { name: "effect/Effect alone (CJS)", args: cjs(effectCjs) },
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
const order = reverse ? [...contenders].reverse() : contenders
for (let round = 0; round < rounds + 1; round++) {
  for (const c of order) {
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

log(`cold start — Node ${process.version}, ${rounds} rounds${reverse ? " (reversed order)" : ""}, medians (stripe ${STRIPE} from npm in ${scratch})`)
for (const [name, v] of Object.entries(ms)) {
  // an import beside stripe's in the same module system; the first sales and whole processes stand alone
  const ours = name.startsWith("@paykit/") || name.startsWith("effect/")
  const against = !ours || name.includes("first sale") ? undefined : name.endsWith("(CJS)") ? ms["stripe (CJS)"]! : ms["stripe (ESM)"]!
  log(`  ${name.padEnd(42)} ${v.toFixed(1).padStart(8)} ms${against !== undefined ? `   ${r(v, against)}× stripe` : ""}`)
}
const goals = {
  "@paykit/client ESM import <= 1.5x stripe": { goal: 1.5, ratio: ratios.clientEsm, met: ratios.clientEsm <= 1.5, lowerIsBetter: true },
  "@paykit/client CJS require <= 1.5x stripe": { goal: 1.5, ratio: ratios.clientCjs, met: ratios.clientCjs <= 1.5, lowerIsBetter: true },
  "@paykit/signing import <= 0.3x stripe": { goal: 0.3, ratio: ratios.signing, met: ratios.signing <= 0.3, lowerIsBetter: true },
  "paykit sign <= 300 ms": { goal: 300, ratio: sign, met: sign <= 300, lowerIsBetter: true, unit: "ms" }
}
for (const [what, g] of Object.entries(goals)) log(`  ${g.met ? "met    " : "NOT MET"} ${what}: ${g.ratio}`)
console.log(JSON.stringify({ bench: "coldstart", node: process.version, rounds, reverse, stripe: STRIPE, ms, ratios, goals }))
