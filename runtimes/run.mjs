#!/usr/bin/env node
/**
 * `pnpm test:runtimes`: the built PayKit packages, as a merchant installs them, on Node 20 (this
 * node), Node 22, Node 24, Bun, Deno and workerd. The runtimes are pinned devDependencies of this
 * project (their binaries ship inside the npm packages).
 *
 *   1. packs the four packages with pnpm (their `prepack` builds dist/ first) and installs the
 *      tarballs into a scratch project OUTSIDE the workspace, so every runtime resolves
 *      `@paykit/*` to the published entry points (dist/), never the workspace's source condition;
 *   2. starts the installed `paykit-sim` on this Node (the "running simulator");
 *   3. runs scenario.mjs (vectors, a sale + awaitFinal against paykit-sim, the simulator inside the
 *      runtime with a callback through the client's Request → Response handler) on each runtime:
 *      Node/Bun/Deno through entry.mjs; workerd through worker.mjs, bundled by esbuild as wrangler
 *      bundles a Worker (`nodejs_compat`, builtins external) and served by `workerd serve`, plus
 *      worker-signing.mjs: the vectors alone in a Worker without `nodejs_compat` (WebCrypto only).
 *
 * Last line: `runtimes: node20 ok, node22 ok, …` (a runtime that failed says `FAIL` and its first
 * error is printed above); exit 1 unless all are ok.
 *
 * Options: `--vectors DIR` (default ../../shared/vectors, else the signing package's copy),
 * `--tarballs DIR` (install these packed tarballs instead of packing again),
 * `--only node20,bun,…`, `--verbose` (print each runtime's whole report), PAYKIT_KEEP_SCRATCH=1.
 */
import { execFileSync, spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const root = resolve(here, "..")
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const verbose = args.includes("--verbose")
const started = Date.now()
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`

const sharedVectors = resolve(root, "..", "shared", "vectors")
const vectorsDir = resolve(option("--vectors") ?? (existsSync(join(sharedVectors, "control.json")) ? sharedVectors : join(root, "packages/signing/test/vectors")))
const bin = (name) => join(here, "node_modules", ".bin", name)
const COMPATIBILITY_DATE = "2026-11-01"
// For the Worker that must do without node:crypto. With this workerd, a compatibility date of
// 2026-11-01 provides node:crypto and node:util even without `nodejs_compat` (node:fs still needs
// the flag); at 2025-06-01 without the flag, `import "node:crypto"` is "No such module" (measured).
const BARE_COMPATIBILITY_DATE = "2025-06-01"
const runtimes = [
  { id: "node20", command: process.execPath, expectVersion: /^v20\./ },
  { id: "node22", command: join(here, "node_modules", "node22", "bin", "node"), expectVersion: /^v22\./ },
  { id: "node24", command: join(here, "node_modules", "node24", "bin", "node"), expectVersion: /^v24\./ },
  { id: "bun", command: bin("bun"), argsBefore: ["run"] },
  { id: "deno", command: bin("deno"), argsBefore: ["run", "--allow-all", "--quiet"] },
  { id: "workerd", command: bin("workerd") }
]
const only = option("--only")?.split(",")
const selected = only ? runtimes.filter((r) => only.includes(r.id)) : runtimes

const run = (cmd, argv, cwd, timeout = 300_000) =>
  execFileSync(cmd, argv, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout, killSignal: "SIGKILL" })
const errText = (e) => `${e.stdout ?? ""}${e.stderr ?? ""}${e.stdout || e.stderr ? "" : String(e)}`.trim()
const execpath = process.env.npm_execpath ?? ""
const pnpm = /pnpm\.c?js$/.test(execpath)
  ? (argv, cwd) => run(process.execPath, [execpath, ...argv], cwd)
  : (argv, cwd) => run("npx", ["-y", "pnpm@10.34.9", ...argv], cwd)

// Runtimes start through node_modules/.bin shims; workerd's is a shell script that does not exec, so
// killing the shim would leave workerd serving. Each child therefore leads its own process group,
// and the whole group is signalled.
const killGroup = (child, signal) => {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // the group is gone already
  }
}

/** Spawns a process, collects its output, kills it after `timeoutMs`. */
function spawnCollect(cmd, argv, cwd, timeoutMs) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, argv, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" }, detached: true })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), timeoutMs)
    child.on("error", (e) => {
      clearTimeout(timer)
      resolvePromise({ code: -1, out, err: `${err}${String(e)}` })
    })
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolvePromise({ code: signal ? `${signal}${signal === "SIGKILL" ? ` (timed out after ${timeoutMs / 1000} s)` : ""}` : code, out, err })
    })
  })
}

/** Starts a long-running process and resolves once `pattern` appears on its stdout. */
function startUntil(cmd, argv, cwd, pattern, timeoutMs = 20_000) {
  const child = spawn(cmd, argv, { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true })
  let out = ""
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} printed no ${pattern} in ${timeoutMs / 1000} s: ${out}`)), timeoutMs)
    child.stdout.on("data", (d) => {
      out += d
      const m = pattern.exec(out)
      if (m) {
        clearTimeout(timer)
        resolvePromise({ child, match: m })
      }
    })
    child.stderr.on("data", (d) => (out += d))
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${cmd} exited ${code}: ${out}`))
    })
  })
}

const freePort = () =>
  new Promise((resolvePromise, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolvePromise(port))
    })
  })

const reportOf = (text) => {
  const line = text.split("\n").find((l) => l.startsWith("PAYKIT_RUNTIME_REPORT "))
  return line === undefined ? undefined : JSON.parse(line.slice("PAYKIT_RUNTIME_REPORT ".length))
}

/** Node, Bun, Deno: entry.mjs in the consumer project. */
async function runProcess(runtime, consumer, simUrl) {
  if (runtime.expectVersion) {
    const version = run(runtime.command, ["--version"], consumer).trim()
    if (!runtime.expectVersion.test(version)) return { ok: false, firstError: `${runtime.command} is ${version}, expected ${runtime.expectVersion}` }
  }
  const result = await spawnCollect(runtime.command, [...(runtime.argsBefore ?? []), "entry.mjs", vectorsDir, simUrl, runtime.id], consumer, 90_000)
  const report = reportOf(result.out)
  if (report === undefined) return { ok: false, firstError: `exit ${result.code}, no report: ${(result.err || result.out).trim().split("\n").slice(0, 12).join("\n")}` }
  return report
}

/** Bundles a worker entry as wrangler would: ESM, worker conditions, node builtins left to workerd. */
async function bundleWorker(consumer, entry, outfile) {
  const esbuild = await import("esbuild")
  const builtins = new Set(builtinModules.filter((m) => !m.startsWith("_")))
  const nodeBuiltins = {
    name: "nodejs-compat-builtins",
    setup(build) {
      build.onResolve({ filter: /^[a-z_/]+$|^node:/ }, (a) => {
        const name = a.path.replace(/^node:/, "")
        return builtins.has(name) || builtins.has(name.split("/")[0]) ? { path: `node:${name}`, external: true } : undefined
      })
    }
  }
  await esbuild.build({
    entryPoints: [join(consumer, entry)],
    outfile: join(consumer, "workerd", outfile),
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    plugins: [nodeBuiltins],
    logLevel: "silent",
    absWorkingDir: consumer
  })
}

const tail = (text, n = 12) => text.trim().split("\n").slice(-n).join("\n")

/**
 * Serves one bundled worker with `workerd serve` and GETs `path`; answers the parsed JSON, or
 * `{ ok: false, firstError }` with workerd's own words when the worker does not load or answer.
 */
async function askWorker(runtime, consumer, { name, script, date, flags, path }) {
  const port = await freePort()
  const config = `${name}.capnp`
  writeFileSync(
    join(consumer, "workerd", config),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .paykitWorker),
    # the simulator runs on this machine: let the worker's fetch reach loopback
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const paykitWorker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "${script}")],
  compatibilityDate = "${date}",
  compatibilityFlags = [${flags.map((f) => `"${f}"`).join(", ")}],
  globalOutbound = "internet",
);
`
  )
  const child = spawn(runtime.command, ["serve", config, "--verbose"], { cwd: join(consumer, "workerd"), stdio: ["ignore", "pipe", "pipe"], detached: true })
  let logs = ""
  child.stdout.on("data", (d) => (logs += d))
  child.stderr.on("data", (d) => (logs += d))
  const exited = new Promise((r) => child.on("exit", (code) => r(code)))
  try {
    const base = `http://127.0.0.1:${port}`
    const deadline = Date.now() + 20_000
    for (;;) {
      if (child.exitCode !== null) return { ok: false, firstError: `workerd exited ${child.exitCode}: ${tail(logs)}` }
      try {
        await fetch(`${base}/ping`)
        break
      } catch {
        if (Date.now() > deadline) return { ok: false, firstError: `workerd did not listen in 20 s: ${tail(logs)}` }
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(90_000) })
    const text = await response.text()
    try {
      return JSON.parse(text)
    } catch {
      return { ok: false, firstError: `workerd answered ${response.status}: ${text.slice(0, 300)}\n${tail(logs)}` }
    }
  } catch (e) {
    return { ok: false, firstError: `${e.message}\n${tail(logs)}` }
  } finally {
    killGroup(child, "SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))])
    killGroup(child, "SIGKILL")
  }
}

/**
 * workerd: (1) the whole scenario in a Worker with `nodejs_compat` (client and simulator need
 * `node:fs`, `node:http`, `node:crypto` there); (2) the signing vectors alone in a Worker WITHOUT
 * `nodejs_compat` on a compatibility date where `node:crypto` does not exist, so only WebCrypto
 * does. Both must pass.
 */
async function runWorkerd(runtime, consumer, simUrl) {
  const vectors = Object.fromEntries(["control", "oauth", "callback"].map((n) => [n, JSON.parse(readFileSync(join(vectorsDir, `${n}.json`), "utf8"))]))
  const keys = Object.fromEntries(readdirSync(join(vectorsDir, "keys")).map((f) => [f, readFileSync(join(vectorsDir, "keys", f), "utf8")]))
  writeFileSync(join(consumer, "vectors-data.json"), JSON.stringify({ vectors, keys, compatibilityDate: COMPATIBILITY_DATE }))
  try {
    await bundleWorker(consumer, "worker.mjs", "worker.js")
    await bundleWorker(consumer, "worker-signing.mjs", "worker-signing.js")
  } catch (e) {
    return { ok: false, firstError: `esbuild could not bundle the worker: ${e.message}` }
  }
  const report = await askWorker(runtime, consumer, { name: "compat", script: "worker.js", date: COMPATIBILITY_DATE, flags: ["nodejs_compat"], path: `/run?sim=${encodeURIComponent(simUrl)}` })
  const started = Date.now()
  const bare = await askWorker(runtime, consumer, { name: "bare", script: "worker-signing.js", date: BARE_COMPATIBILITY_DATE, flags: [], path: "/run" })
  report.steps ??= {}
  report.steps["signing without node:crypto"] = bare.ok
    ? { ok: true, passed: bare.passed, used: bare.used, ms: Date.now() - started }
    : { ok: false, error: bare.error ?? bare.firstError, ms: Date.now() - started }
  if (!bare.ok) report.firstError ??= `signing without node:crypto: ${bare.error ?? bare.firstError}`
  report.ok = report.ok === true && bare.ok === true
  return report
}

const scratch = mkdtempSync(join(tmpdir(), "paykit-runtimes-"))
const results = new Map()
let sim
try {
  // 1. pack (prepack builds) and install into a scratch project outside the workspace
  // --tarballs DIR: the four .tgz of an earlier pack (e.g. kept by PAYKIT_KEEP_SCRATCH), no re-pack
  const given = option("--tarballs")
  const tarballDir = given === undefined ? join(scratch, "tarballs") : resolve(given)
  if (given === undefined) {
    mkdirSync(tarballDir)
    pnpm(["-r", "--filter", "./packages/*", "pack", "--pack-destination", tarballDir], root)
  }
  const tarballs = Object.fromEntries(
    readdirSync(tarballDir).filter((f) => f.endsWith(".tgz")).map((f) => [`@paykit/${/^paykit-(.+)-\d+\.\d+\.\d+.*\.tgz$/.exec(f)[1]}`, `file:${join(tarballDir, f)}`])
  )
  const consumer = join(scratch, "consumer")
  mkdirSync(join(consumer, "workerd"), { recursive: true })
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "runtime-consumer", private: true, type: "module", dependencies: tarballs, pnpm: { overrides: tarballs } }, null, 2))
  pnpm(["install", "--ignore-workspace", "--no-frozen-lockfile", "--config.auto-install-peers=true", "--reporter=silent"], consumer)
  for (const f of ["vectors.mjs", "scenario.mjs", "entry.mjs", "worker.mjs", "worker-signing.mjs"]) cpSync(join(here, f), join(consumer, f))
  console.log(`packed and installed ${Object.keys(tarballs).join(", ")} into ${consumer} (${elapsed()}); vectors from ${vectorsDir}`)

  // 2. the running simulator: the installed paykit-sim on this Node
  const started = await startUntil(process.execPath, [join(consumer, "node_modules", "@paykit", "testkit", "bin", "paykit-sim.js"), "--port", "0"], consumer, /listening on (http:\/\/\S+)/)
  sim = started.child
  const simUrl = started.match[1]
  console.log(`paykit-sim (installed bin, ${process.version}) listening on ${simUrl}`)

  // 3. each runtime
  for (const runtime of selected) {
    const t0 = Date.now()
    let report
    try {
      report = runtime.id === "workerd" ? await runWorkerd(runtime, consumer, simUrl) : await runProcess(runtime, consumer, simUrl)
    } catch (e) {
      report = { ok: false, firstError: errText(e) }
    }
    results.set(runtime.id, report)
    const steps = Object.entries(report.steps ?? {})
      .map(([name, s]) => `${name} ${s.ok ? "ok" : "FAIL"}${s.passed ? ` (${s.passed} cases${s.used?.some((u) => u.endsWith("Async")) ? `, ${s.used.filter((u) => u.endsWith("Async")).join("/")}` : ""})` : ""}${s.how ? ` (${s.how})` : ""}`)
      .join(", ")
    console.log(`${runtime.id}: ${report.ok ? "ok" : "FAIL"} in ${((Date.now() - t0) / 1000).toFixed(1)} s${report.version ? ` [${report.version}]` : ""}${steps ? ` — ${steps}` : ""}`)
    if (!report.ok) {
      console.log(`  first error: ${report.firstError}`)
      // each other failing step in a line, so one failure does not hide another
      for (const [name, s] of Object.entries(report.steps ?? {})) {
        if (!s.ok && !report.firstError?.startsWith(`${name}:`)) console.log(`  ${name}: ${String(s.error).slice(0, 400)}`)
      }
    }
    if (verbose) console.log(JSON.stringify(report, null, 2).replace(/^/gm, "  "))
  }
} catch (e) {
  console.error(`runtimes: aborted: ${errText(e)}`)
  for (const r of selected) if (!results.has(r.id)) results.set(r.id, { ok: false, firstError: "not run (aborted)" })
} finally {
  if (sim !== undefined) killGroup(sim, "SIGTERM")
  if (process.env.PAYKIT_KEEP_SCRATCH) console.log(`scratch kept: ${scratch}`)
  else rmSync(scratch, { recursive: true, force: true })
}
const allOk = selected.every((r) => results.get(r.id)?.ok === true)
console.log(`total ${elapsed()}`)
console.log(`runtimes: ${selected.map((r) => `${r.id} ${results.get(r.id)?.ok ? "ok" : "FAIL"}`).join(", ")}`)
process.exit(allOk ? 0 : 1)
