/**
 * The long model run: `pnpm --filter @paykit/testkit model -- --runs 100000 --seed 42`.
 * Same property as test/model/lifecycle.test.ts (random lifecycles through the simulator's HTTP
 * interface, judged by the reference model and decision 10's invariants), N sequences from one
 * seed. Prints what was exercised, then one verdict line; on a failure, the shrunk sequence as a
 * vitest case to paste, and exits 1.
 */
import { parseArgs } from "node:util"
import * as fc from "fast-check"
import { lifecycleProperty } from "../test/model/commands"
import { coverage, ModelMismatch } from "../test/model/runner"

// `pnpm model -- --runs N` hands the script a literal "--".
const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== "--"),
  options: {
    runs: { type: "string", default: "100000" },
    seed: { type: "string" },
    "max-commands": { type: "string", default: "20" }
  }
})
const integer = (name: string, text: string): number => {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`)
  return n
}
const runs = integer("runs", values.runs)
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : integer("seed", values.seed)
const maxCommands = integer("max-commands", values["max-commands"])

console.log(`model: ${runs} sequences of at most ${maxCommands} steps, seed ${seed}`)
const started = Date.now()
let sequences = 0
const details = await fc.check(lifecycleProperty(maxCommands, () => {
  sequences++
  if (sequences % 10_000 === 0) console.log(`  ${sequences} sequences, ${((Date.now() - started) / 1000).toFixed(0)} s`)
}), { numRuns: runs, seed })
const seconds = ((Date.now() - started) / 1000).toFixed(1)
const steps = Object.entries(coverage).filter(([key]) => !key.startsWith(" ")).sort()
console.log(`  exercised: ${steps.map(([k, v]) => `${k} ${v}`).join("; ")}`)
if (details.failed) {
  const error = details.errorInstance
  console.log(`  seed ${details.seed}, path ${JSON.stringify(details.counterexamplePath)}, shrunk ${details.numShrinks} times`)
  console.log(error instanceof ModelMismatch ? error.message : String(error))
  console.log(`model: FAILED after ${details.numRuns} sequences in ${seconds} s (seed ${seed})`)
  process.exit(1)
}
console.log(`model: ${details.numRuns} sequences passed in ${seconds} s (seed ${seed})`)
