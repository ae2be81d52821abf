#!/usr/bin/env node
/**
 * The protocol model at length: runs fast-check sequences of the money-call protocol (N client
 * instances over one store, crashes, stalls, lost replies, recover(); packages/client/test/model/)
 * on one store, prints progress, and on a failure the shrunk counterexample as code to paste.
 *
 *   node scripts/model.mjs --runs 100000 --store memory
 *   node scripts/model.mjs --runs 100000 --store pglite
 *   node scripts/model.mjs --runs 100000 --store postgres       # starts a PostgreSQL 15 for the run
 *   node scripts/model.mjs --runs 100000 --store postgres --shards 3   # 3 processes, seeds S, S+1, S+2,
 *                                                               # one database each on one server
 *   node scripts/model.mjs --store postgres --database-url …    # or PAYKIT_DATABASE_URL: an existing server
 *   node scripts/model.mjs --seed=N --path P --replay-path R    # replays a reported failure (a seed may be negative)
 *   node scripts/model.mjs --only '^\[1 '                       # fails only on problems matching it
 *   node scripts/model.mjs --survey                             # counts every kind of failure, does not stop
 *   node scripts/model.mjs --commands 25                        # longer sequences (default 20)
 *   node scripts/model.mjs --by-the-book                        # no per-call deadline above the lease
 *   node scripts/model.mjs --pin '{"maxOrders":null}'           # fixes configuration fields
 *   node scripts/model.mjs --without stall,unstall              # leaves kinds of step out
 *   node scripts/model.mjs --replay '[config, steps]'           # one sequence, everything it did
 *
 * The exit code is 1 when an invariant broke. The database URL is never printed.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)
if (args.includes("--help")) {
  console.log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("*/")[0].replace(/^#!.*\n\/\*\*\n?/, "").replace(/^ \* ?/gm, ""))
  process.exit(0)
}
// The URL travels to the model in the environment, never on a command line `ps` shows.
const env = { ...process.env }
const at = args.indexOf("--database-url")
if (at >= 0) {
  env.PAYKIT_DATABASE_URL = args[at + 1] ?? ""
  args.splice(at, 2)
}
// `--shards K` (K > 1) runs K model processes through shards.ts; one shard is cli.ts alone, as without it.
const shardsAt = args.findIndex((a) => a === "--shards" || a.startsWith("--shards="))
const shards = shardsAt < 0 ? 1 : Number(args[shardsAt].startsWith("--shards=") ? args[shardsAt].slice(9) : args[shardsAt + 1])
if (shardsAt >= 0 && shards === 1) args.splice(shardsAt, args[shardsAt].startsWith("--shards=") ? 1 : 2)
const entry = shards === 1 ? "packages/client/test/model/cli.ts" : "packages/client/test/model/shards.ts"
const child = spawn(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", entry, ...args], {
  cwd: repo,
  env,
  stdio: "inherit"
})
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)))
