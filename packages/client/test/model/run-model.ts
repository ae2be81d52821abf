/**
 * The model's property run for the test files: `runs` sequences on one store through `fc.check`,
 * and on a failure an error whose message is the shrunk counterexample as code to paste.
 *
 * @packageDocumentation
 */
import fc from "fast-check"
import { problemKind } from "./invariants"
import { modelRuntime, pasteable, protocolProperty, stepsOf } from "./protocol-model"
import type { ModelStore } from "./stores"
import type { WorldConfig } from "./config"

/** Sequences per run of the test files: `PAYKIT_MODEL_RUNS` (default 2000), split between the stores. */
export function modelRuns(share: number): number {
  const total = Number(process.env["PAYKIT_MODEL_RUNS"] ?? 2000)
  if (!Number.isSafeInteger(total) || total < 1) throw new Error("PAYKIT_MODEL_RUNS: a positive integer of sequences")
  return Math.max(1, Math.round(total * share))
}

/** `PAYKIT_MODEL_SEED` pins the seed (a failure prints the seed it ran with). */
// `pnpm test` runs one fixed seed, so a run of the suite is the same on every machine and a red one
// is a change's doing; `PAYKIT_MODEL_SEED=random` (or `scripts/model.mjs`) explores new sequences.
const SUITE_SEED = 20_261_127
const pinnedSeed = (): number | undefined => {
  const seed = process.env["PAYKIT_MODEL_SEED"]
  if (seed === "random") return undefined
  return seed === undefined || seed === "" ? SUITE_SEED : Number(seed)
}

/**
 * Runs `runs` sequences of at most `maxCommands` steps on `store`; throws the shrunk counterexample.
 * With `PAYKIT_MODEL_SURVEY=1` it runs them all and throws a count of every kind of failure instead
 * (unshrunk: the shortest sequence of each kind).
 */
export async function runModel(store: ModelStore, runs: number, maxCommands: number): Promise<{ sequences: number }> {
  const runtime = modelRuntime(store)
  let sequences = 0
  const survey = process.env["PAYKIT_MODEL_SURVEY"] === "1" ? new Map<string, { count: number; shortest: string }>() : undefined
  try {
    const seed = pinnedSeed()
    const details = await fc.check(protocolProperty(runtime, {
      maxCommands,
      onSequence: () => sequences++,
      onViolation: survey === undefined ? undefined : (violation, config, steps) => {
        const kind = problemKind(violation.problems[0]!)
        const seen = survey.get(kind)
        const text = `${violation.problems[0]!}\n${pasteable(store.name, config, steps, 0, undefined)}`
        if (seen === undefined) survey.set(kind, { count: 1, shortest: text })
        else {
          seen.count++
          if (text.length < seen.shortest.length) seen.shortest = text
        }
      }
    }), {
      numRuns: runs,
      ...(seed === undefined ? {} : { seed })
    })
    if (survey !== undefined && survey.size > 0) {
      throw new Error(`the protocol model failed on ${store.name} (${runs} sequences, seed ${details.seed}):\n\n${[...survey].map(([kind, s]) => `== ${s.count}× ${kind}\n${s.shortest}`).join("\n\n")}`)
    }
    if (details.failed) {
      const [config, commands] = details.counterexample! as [WorldConfig, Iterable<unknown>]
      const message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
      throw new Error(
        `the protocol model failed on ${store.name} (sequence ${details.numRuns}, shrunk ${details.numShrinks} times, seed ${details.seed}):\n\n${message}\n\n` +
          pasteable(store.name, config, stepsOf(commands), details.seed, details.counterexamplePath ?? undefined, commands, { maxCommands })
      )
    }
    return { sequences }
  } finally {
    runtime.time.uninstall()
  }
}
