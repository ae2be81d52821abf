#!/usr/bin/env node
/**
 * The flake hunt: runs the whole CI (`bash .ci/run`, the README's test command) several times, each
 * time from a fresh clone, optionally with CPU-bound processes running beside it, and lists every
 * test that failed at least once. A test that fails on a loaded machine is a bug to fix, never a
 * test to retry (docs/testing.md).
 *
 *   node scripts/flake-hunt.mjs                       # 3 quiet runs of HEAD
 *   node scripts/flake-hunt.mjs --runs 2 --load 2     # 2 runs, each beside 2 busy processes
 *   node scripts/flake-hunt.mjs --plan 3x0,2x2        # 3 quiet runs, then 2 beside 2 busy processes
 *   node scripts/flake-hunt.mjs --ref <commit> --keep # another commit; keep the clones and logs
 *
 * Each clone is made in a temporary folder with `shared/` (the interface document, the signing
 * vectors: `../shared` as CI has it) linked beside it. The report ends with one line:
 * `flake-hunt: runs N, green G, failing tests F` and the exit code is 1 when any run was red.
 */
import { spawn, execFileSync } from "node:child_process"
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    load: { type: "string", default: "0" },
    plan: { type: "string" },
    ref: { type: "string", default: "HEAD" },
    keep: { type: "boolean", default: false },
    report: { type: "string" },
    help: { type: "boolean", default: false }
  }
})
if (values.help) {
  console.log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("*/")[0].replace(/^#!.*\n\/\*\*\n?/, "").replace(/^ \* ?/gm, ""))
  process.exit(0)
}

/** `3x0,2x2` → [0, 0, 0, 2, 2]: the number of busy processes beside each run. */
function planOf() {
  const spec = values.plan ?? `${values.runs}x${values.load}`
  const loads = []
  for (const part of spec.split(",")) {
    const m = /^(\d+)x(\d+)$/.exec(part.trim())
    if (m === null) throw new Error(`--plan: "${part}" is not RUNSxLOAD (for example 3x0,2x2)`)
    for (let i = 0; i < Number(m[1]); i++) loads.push(Number(m[2]))
  }
  if (loads.length === 0) throw new Error("--plan: no runs")
  return loads
}

const commit = execFileSync("git", ["rev-parse", values.ref], { cwd: repo, encoding: "utf8" }).trim()
const shared = resolve(repo, "..", "shared")
const work = mkdtempSync(join(tmpdir(), "paykit-flake-hunt-"))

// ANSI colours out; turbo's task prefix kept (it names the package).
const plain = (line) => line.replace(/\u001b\[[0-9;]*m/g, "")

/**
 * Failed tests in one run's log: vitest's `FAIL  file > suite > name` lines and its `×` marks
 * (prefixed by turbo with `<package>:test: `), and any other step that printed a failure verdict.
 */
export function failuresIn(log) {
  const failed = new Set()
  for (const raw of log.split("\n")) {
    const line = plain(raw)
    const task = /^(@[\w-]+\/[\w-]+|[\w-]+):(test|typecheck|build)[^:]*:\s?(.*)$/.exec(line)
    const pkg = task?.[1] ?? ""
    const text = (task?.[3] ?? line).trim()
    let m
    if ((m = /^FAIL\s+(\S.*)$/.exec(text)) !== null) failed.add(`${pkg} ${m[1].trim()}`.trim())
    else if ((m = /^×\s+(\S.*?)(\s+\d+ms)?$/.exec(text)) !== null) failed.add(`${pkg} ${m[1].trim()}`.trim())
    else if (task !== null && task[2] !== "test" && /error TS\d+|ERR_|Error:/.test(text)) failed.add(`${pkg} ${task[2]}: ${text.slice(0, 160)}`)
    else if ((m = /^(runtimes|fleet|release): (.*)$/.exec(text)) !== null && /failed|not ok| [1-9]\d* (double|lost|duplicate|stuck)/.test(m[2])) failed.add(`${m[1]}: ${m[2]}`)
  }
  return [...failed]
}

// What runs now (the busy processes, the CI's process group), stopped when the hunt is.
const running = new Set()
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const stop of running) stop()
    process.exit(130)
  })
}

function busy(n) {
  const procs = []
  for (let i = 0; i < n; i++) procs.push(spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }))
  const stop = () => {
    for (const p of procs) p.kill("SIGKILL")
    running.delete(stop)
  }
  running.add(stop)
  return stop
}

function runOnce(index, load) {
  const dir = join(work, `run-${index}`)
  const clone = join(dir, "main")
  execFileSync("git", ["clone", "-q", repo, clone])
  execFileSync("git", ["checkout", "-q", commit], { cwd: clone })
  // `changeset status` compares against `main`, which a clone of a branch may not have.
  try { execFileSync("git", ["branch", "-f", "main", "origin/main"], { cwd: clone, stdio: "ignore" }) } catch { /* main checked out */ }
  if (existsSync(shared)) symlinkSync(shared, join(dir, "shared"))
  const logPath = join(dir, "ci.log")
  const log = createWriteStream(logPath)
  const stop = busy(load)
  const started = Date.now()
  return new Promise((done) => {
    const ci = spawn("bash", [".ci/run"], { cwd: clone, env: { ...process.env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"], detached: true })
    const stopCi = () => {
      try { process.kill(-ci.pid, "SIGKILL") } catch { /* already gone */ }
    }
    running.add(stopCi)
    ci.stdout.pipe(log, { end: false })
    ci.stderr.pipe(log, { end: false })
    ci.on("close", (code) => {
      running.delete(stopCi)
      stop()
      log.end(() => {
        const text = readFileSync(logPath, "utf8")
        const last = text.trimEnd().split("\n").map(plain).filter((l) => /^\d+ passed, \d+ failed/.test(l.trim())).pop() ?? "(no summary line)"
        done({ index, load, code, seconds: Math.round((Date.now() - started) / 1000), summary: last.trim(), failures: failuresIn(text), logPath, dir })
      })
    })
  })
}

const results = []
const plan = planOf()
console.log(`flake-hunt: ${plan.length} runs of ${commit.slice(0, 12)} in ${work}`)
for (const [i, load] of plan.entries()) {
  const r = await runOnce(i + 1, load)
  results.push(r)
  console.log(`run ${r.index} (${load} busy processes beside it): ${r.code === 0 ? "green" : `red (exit ${r.code})`} in ${r.seconds} s; ${r.summary}`)
  for (const f of r.failures) console.log(`  failed: ${f}`)
  if (!values.keep) rmSync(join(r.dir, "main"), { recursive: true, force: true })
}

const counts = new Map()
for (const r of results) for (const f of r.failures) counts.set(f, (counts.get(f) ?? 0) + 1)
console.log("")
console.log(counts.size === 0 ? "no test failed in any run" : "tests that failed at least once (runs failed / runs):")
for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${n}/${results.length}  ${name}`)
const green = results.filter((r) => r.code === 0).length
if (values.report !== undefined) writeFileSync(values.report, JSON.stringify({ commit, results: results.map(({ dir, ...r }) => r), failing: Object.fromEntries(counts) }, null, 2))
if (!values.keep) rmSync(work, { recursive: true, force: true })
else console.log(`clones and logs kept in ${work}`)
console.log(`flake-hunt: runs ${results.length}, green ${green}, failing tests ${counts.size}`)
process.exit(green === results.length ? 0 : 1)
