/**
 * The model from the command line (`node scripts/model.mjs`): runs `--runs` sequences on one store,
 * prints progress, and on a failure fast-check's shrunk counterexample as code to paste.
 *
 *   --runs N          sequences (default 100000)
 *   --store S         memory | pglite | postgres (default memory)
 *   --commands N      longest sequence (default 20)
 *   --seed=N --path P replay a reported failure (`=`: a seed may be negative)
 *   --only REGEX      fail only on problems matching it (shrinks one kind of failure apart)
 *   --by-the-book     no per-call deadline longer than the intent lease (every policy as docs/fleet.md says)
 *   --pin JSON        configuration fields every sequence gets, e.g. '{"maxOrders":null,"maxAgeMs":null}'
 *   --without KINDS   steps the sequences leave out, e.g. stall,unstall
 *   --replay JSON     runs one sequence, `[config, steps]` as a counterexample prints them, and
 *                     prints everything that happened (to check a counterexample by hand)
 *   --survey          do not stop at a failure: count the failures by invariant and keep the
 *                     shortest sequence of each kind (not shrunk)
 *
 * PostgreSQL: the server at `PAYKIT_DATABASE_URL` (never printed), else a PostgreSQL 15 started
 * for the run (scripts/postgres/server.ts).
 *
 * @packageDocumentation
 */
import fc from "fast-check"
import { parseArgs } from "node:util"
// The client's engine loads on first use, in real time, while the model's clock is virtual: it
// loads here first, as vitest's setup file does for the tests (test/support/warm-engine.ts).
import "../support/warm-engine"
import { modelRuntime, pasteable, protocolProperty, runSequence, stepsOf, type ModelViolation, type Step } from "./protocol-model"
import { memoryModelStore, pgliteModelStore, postgresModelStore, type ModelStore, type StoreName } from "./stores"
import { realNow } from "./virtual-time"
import type { WorldConfig } from "./config"
import { problemKind } from "./invariants"
import type { World } from "./world"

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "100000" },
    store: { type: "string", default: "memory" },
    commands: { type: "string", default: "20" },
    seed: { type: "string" },
    path: { type: "string" },
    "replay-path": { type: "string" },
    only: { type: "string" },
    survey: { type: "boolean", default: false },
    "by-the-book": { type: "boolean", default: false },
    pin: { type: "string" },
    without: { type: "string" },
    replay: { type: "string" }
  }
})

const runs = Number(values.runs)
const maxCommands = Number(values.commands)
const storeName = values.store as StoreName
if (!["memory", "pglite", "postgres"].includes(storeName)) throw new Error("--store: memory, pglite or postgres")
if (!Number.isSafeInteger(runs) || runs < 1) throw new Error("--runs: a positive integer")

async function openStore(): Promise<{ store: ModelStore; stop: () => Promise<void> }> {
  if (storeName === "memory") return { store: memoryModelStore(), stop: async () => undefined }
  if (storeName === "pglite") return { store: await pgliteModelStore(), stop: async () => undefined }
  const given = process.env["PAYKIT_DATABASE_URL"]
  if (given !== undefined && given !== "") return { store: await postgresModelStore(given), stop: async () => undefined }
  const { startPostgres } = await import("../../../../scripts/postgres/server")
  const server = await startPostgres()
  process.stderr.write(`model: PostgreSQL 15 started for the run\n`)
  return { store: await postgresModelStore(server.url), stop: () => server.stop() }
}

const { store, stop } = await openStore()
const runtime = modelRuntime(store)

if (values.replay !== undefined) {
  const [config, steps] = JSON.parse(values.replay) as [WorldConfig, Array<Step>]
  let code = 0
  try {
    const world = await runSequence(runtime, config, steps)
    process.stdout.write(`every invariant held\n  what happened:\n    ${world.book.log.join("\n    ")}\n`)
  } catch (error) {
    code = 1
    process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`)
  } finally {
    runtime.time.uninstall()
    await store.close()
    await stop()
  }
  process.exit(code)
}

const started = realNow()
const cpuStart = process.cpuUsage()
let done = 0
let lastPrint = started
const stats = new Map<string, number>()
const count = (what: string, n = 1) => stats.set(what, (stats.get(what) ?? 0) + n)
const progress = (world: World) => {
  count("sends", world.book.sends.length)
  for (const v of world.book.verdicts) count(`answers ${v.kind}`)
  count("transactions", world.book.bySerial.size)
  count("log lines", world.book.log.length)
  if (process.env["MODEL_SHOW"] !== undefined && done % Number(process.env["MODEL_SHOW"]) === 0) process.stderr.write(world.book.log.join("\n") + "\n\n")
  done++
  const now = realNow()
  if (now - lastPrint >= 5000 || done === runs) {
    lastPrint = now
    const s = (now - started) / 1000
    process.stderr.write(`model ${storeName}: ${done}/${runs} sequences, ${s.toFixed(0)} s, ${(done / s).toFixed(1)} sequences/s, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB, timers ${runtime.time.pending}\n`)
  }
}

const only = values.only === undefined ? undefined : new RegExp(values.only)
const survey = new Map<string, { count: number; shortest: { config: WorldConfig; steps: ReadonlyArray<Step>; violation: ModelViolation } }>()
// A double move is told apart by the answers its key got (the path that led to it).
const kindOf = (problem: string) => problemKind(problem) + (problemKind(problem) === "1 double-move" ? ` — ${/its answers: (.*)$/.exec(problem)?.[1] ?? ""}` : "")

let exitCode = 0
try {
  const property = protocolProperty(runtime, {
    maxCommands,
    replayPath: values["replay-path"],
    longDeadlines: !values["by-the-book"],
    pin: values.pin === undefined ? undefined : (JSON.parse(values.pin) as Partial<WorldConfig>),
    without: values.without === undefined ? undefined : (values.without.split(",") as Array<Step["c"]>),
    matches: only === undefined ? undefined : (p) => only.test(p),
    onSequence: progress,
    onViolation: values.survey
      ? (violation, config, steps) => {
        const kind = kindOf(violation.problems[0]!)
        const entry = survey.get(kind)
        if (entry === undefined) survey.set(kind, { count: 1, shortest: { config, steps, violation } })
        else {
          entry.count++
          if (steps.length < entry.shortest.steps.length) entry.shortest = { config, steps, violation }
        }
      }
      : undefined
  })
  const seed = values.seed === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(values.seed)
  const details = await fc.check(property, {
    numRuns: runs,
    seed,
    ...(values.path === undefined ? {} : { path: values.path, endOnFailure: true })
  })
  const seconds = (realNow() - started) / 1000
  const cpu = process.cpuUsage(cpuStart)
  process.stderr.write(`model ${storeName}: ${done} sequences in ${seconds.toFixed(1)} s (${(done / seconds).toFixed(1)}/s; CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s), seed ${seed}\n`)
  count("drain waits for the store", runtime.time.externalWaits)
  process.stderr.write(`model ${storeName}: ${[...stats].map(([k, v]) => `${k} ${v}`).join(", ")}\n`)
  if (details.failed) {
    exitCode = 1
    const [config, commands] = details.counterexample! as [WorldConfig, Iterable<unknown>]
    const steps = stepsOf(commands)
    process.stdout.write(`\nmodel ${storeName}: FAILED after ${details.numRuns} sequences, shrunk ${details.numShrinks} times\n\n`)
    process.stdout.write(`${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n\n`)
    const flags = `${values["by-the-book"] ? " --by-the-book" : ""}${values.without === undefined ? "" : ` --without ${values.without}`}${values.pin === undefined ? "" : ` --pin '${values.pin}'`}${values.only === undefined ? "" : ` --only '${values.only}'`}`
    process.stdout.write(`${pasteable(storeName, config, steps, details.seed, details.counterexamplePath ?? undefined, commands, { maxCommands, flags })}\n`)
  } else if (survey.size > 0) {
    exitCode = 1
    for (const [kind, { count, shortest }] of survey) {
      process.stdout.write(`\n== ${count}× ${kind}\n${shortest.violation.problems.join("\n")}\n${pasteable(storeName, shortest.config, shortest.steps, seed, undefined)}\n`)
    }
  } else {
    process.stdout.write(`model ${storeName}: ${done} sequences, every invariant held\n`)
  }
} finally {
  runtime.time.uninstall()
  await store.close()
  await stop()
}
process.exit(exitCode)
