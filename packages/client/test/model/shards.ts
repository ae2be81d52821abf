/**
 * The model in shards (`node scripts/model.mjs --shards K`): K model processes (cli.ts) at once,
 * each with its own seed (the base seed plus its index) and its share of `--runs`; on PostgreSQL
 * each on its own database of one server, so a shard's round trips overlap another's work instead
 * of leaving the processor idle. Progress is summed; the first shard that breaks an invariant stops
 * the others, and its counterexample is printed as a single run prints it (its replay command runs
 * without `--shards`, on that shard's seed).
 *
 *   --shards K        processes (default 1: scripts/model.mjs runs cli.ts alone, not this file)
 *   --runs N          sequences in all (default 100000), split between the shards
 *   --seed=N          the base seed (default random); shard i runs seed N + i
 *
 * Every other flag of cli.ts passes through to each shard, except the ones of a single sequence
 * (`--replay`, `--path`, `--replay-path`, `--survey`), which run without `--shards`.
 *
 * @packageDocumentation
 */
import { spawn, type ChildProcess } from "node:child_process"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, "../../../..")

const args = process.argv.slice(2)
const take = (name: string): string | undefined => {
  const eq = args.findIndex((a) => a.startsWith(`--${name}=`))
  if (eq >= 0) return args.splice(eq, 1)[0]!.slice(name.length + 3)
  const at = args.indexOf(`--${name}`)
  if (at < 0) return undefined
  return args.splice(at, 2)[1]
}

const shards = Number(take("shards") ?? "1")
const runs = Number(take("runs") ?? "100000")
const storeName = take("store") ?? "memory"
const seedArg = take("seed")
if (!Number.isSafeInteger(shards) || shards < 1 || shards > 32) throw new Error("--shards: an integer from 1 to 32")
if (!Number.isSafeInteger(runs) || runs < shards) throw new Error("--runs: an integer of at least --shards sequences")
if (!["memory", "pglite", "postgres"].includes(storeName)) throw new Error("--store: memory, pglite or postgres")
for (const single of ["--replay", "--path", "--replay-path", "--survey"]) {
  if (args.some((a) => a === single || a.startsWith(`${single}=`))) throw new Error(`${single} runs one process: leave out --shards`)
}
// fast-check seeds are 32-bit integers; `| 0` keeps base + i one too.
const baseSeed = seedArg === undefined ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : Number(seedArg)
if (!Number.isSafeInteger(baseSeed)) throw new Error("--seed: an integer")
const seedOf = (i: number) => (baseSeed + i) | 0
const shareOf = (i: number) => Math.floor(runs / shards) + (i < runs % shards ? 1 : 0)

interface Database {
  readonly urlOf: (i: number) => string | undefined
  readonly stop: () => Promise<void>
}

/** PostgreSQL: one server (the given one, or one started here), one fresh database per shard. */
async function openDatabases(): Promise<Database> {
  if (storeName !== "postgres") return { urlOf: () => undefined, stop: async () => undefined }
  const pg = (await import("pg")).default
  const given = process.env["PAYKIT_DATABASE_URL"]
  let stopServer = async (): Promise<void> => undefined
  let url: string
  if (given !== undefined && given !== "") url = given
  else {
    const { startPostgres } = await import("../../../../scripts/postgres/server")
    // Each shard's pool holds up to 8 connections.
    const server = await startPostgres({ maxConnections: 10 * shards + 10 })
    process.stderr.write(`model: PostgreSQL 15 started for the run\n`)
    url = server.url
    stopServer = () => server.stop()
  }
  const suffix = Math.random().toString(36).slice(2, 8)
  const names = Array.from({ length: shards }, (_, i) => `paykit_model_${suffix}_${i}`)
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    for (const name of names) await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return {
    urlOf: (i) => {
      const u = new URL(url)
      u.pathname = `/${names[i]!}`
      return u.toString()
    },
    stop: async () => {
      if (given !== undefined && given !== "") {
        const admin = new pg.Client({ connectionString: url })
        await admin.connect()
        try {
          for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        } finally {
          await admin.end()
        }
      }
      await stopServer()
    }
  }
}

interface Shard {
  readonly index: number
  readonly seed: number
  readonly runs: number
  readonly child: ChildProcess
  done: number
  stdout: string
  stderrTail: string
  finished?: { code: number | null; signal: NodeJS.Signals | null; line?: string }
}

const database = await openDatabases()
const started = performance.now()
let stopping = false
const live: Array<Shard> = []

process.stderr.write(
  `model ${storeName}: ${runs} sequences in ${shards} shards, seeds ${seedOf(0)}…${seedOf(shards - 1)} (shard i: seed ${baseSeed} + i, ${shareOf(shards - 1)}–${shareOf(0)} sequences)\n`
)

const exits = Array.from({ length: shards }, (_, i) =>
  new Promise<Shard>((resolveShard) => {
    const url = database.urlOf(i)
    const env = { ...process.env }
    if (url !== undefined) env["PAYKIT_DATABASE_URL"] = url
    const child = spawn(
      process.execPath,
      ["--conditions=@paykit/source", "--import", "tsx", "packages/client/test/model/cli.ts", "--runs", String(shareOf(i)), "--store", storeName, `--seed=${seedOf(i)}`, ...args],
      { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] }
    )
    const shard: Shard = { index: i, seed: seedOf(i), runs: shareOf(i), child, done: 0, stdout: "", stderrTail: "" }
    live.push(shard)
    child.stdout!.setEncoding("utf8").on("data", (text: string) => (shard.stdout += text))
    let pending = ""
    child.stderr!.setEncoding("utf8").on("data", (text: string) => {
      pending += text
      const lines = pending.split("\n")
      pending = lines.pop()!
      for (const line of lines) {
        const progress = /: (\d+)\/\d+ sequences,/.exec(line) ?? /: (\d+) sequences in /.exec(line)
        if (progress !== null) shard.done = Number(progress[1])
        if (/ sequences in /.test(line)) shard.finished = { code: null, signal: null, line }
        else if (progress === null && !/PostgreSQL 15 started/.test(line)) shard.stderrTail = (shard.stderrTail + line + "\n").slice(-4000)
      }
    })
    child.on("exit", (code, signal) => {
      shard.finished = { ...shard.finished, code, signal }
      resolveShard(shard)
    })
  })
)

const summed = () => live.reduce((n, s) => n + s.done, 0)
const report = () => {
  const s = (performance.now() - started) / 1000
  process.stderr.write(`model ${storeName} ×${shards}: ${summed()}/${runs} sequences, ${s.toFixed(0)} s, ${(summed() / s).toFixed(1)} sequences/s\n`)
}
const ticker = setInterval(report, 5000)

const stopAll = (signal: NodeJS.Signals) => {
  stopping = true
  for (const s of live) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill(signal)
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => stopAll(signal))

// The first shard that fails stops the rest: its counterexample is the run's answer.
let failed: Shard | undefined
let broken: Shard | undefined
await Promise.all(exits.map((exit) =>
  exit.then((shard) => {
    if (shard.finished!.code === 0) return
    if (shard.finished!.code === 1 && /FAILED after|== \d+×/.test(shard.stdout)) failed ??= shard
    else if (!stopping) broken ??= shard
    stopAll("SIGTERM")
  })
))
clearInterval(ticker)
report()
const seconds = (performance.now() - started) / 1000
await database.stop()

let exitCode = 0
if (failed !== undefined) {
  exitCode = 1
  process.stderr.write(`model ${storeName}: shard ${failed.index} (seed ${failed.seed}) broke an invariant after ${summed()} sequences in all, ${seconds.toFixed(1)} s\n`)
  process.stdout.write(failed.stdout)
} else if (broken !== undefined) {
  exitCode = 2
  process.stderr.write(`model ${storeName}: shard ${broken.index} (seed ${broken.seed}) ended with ${broken.finished!.code ?? broken.finished!.signal}:\n${broken.stderrTail}${broken.stdout}`)
} else if (stopping) {
  exitCode = 130
  process.stderr.write(`model ${storeName}: stopped after ${summed()} sequences (partial), ${seconds.toFixed(1)} s, seeds ${seedOf(0)}…${seedOf(shards - 1)}\n`)
} else {
  for (const s of live) process.stderr.write(`  shard ${s.index}: ${s.finished!.line ?? `${s.done} sequences`}\n`)
  process.stderr.write(`model ${storeName}: ${summed()} sequences in ${seconds.toFixed(1)} s (${(summed() / seconds).toFixed(1)}/s) over ${shards} shards, seeds ${seedOf(0)}…${seedOf(shards - 1)}\n`)
  process.stdout.write(`model ${storeName}: ${summed()} sequences, every invariant held\n`)
}
process.exit(exitCode)
