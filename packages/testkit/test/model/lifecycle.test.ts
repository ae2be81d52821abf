/**
 * Model-based lifecycle tests (issue #11): random sequences of sale, preauth, capture, void,
 * return, status, resends, clock advances (zero included), concurrent pairs interleaved by
 * fc.scheduler and restarts from a snapshot, driven through the simulator's HTTP interface and
 * judged by the reference model (./reference.ts) and decision 10's invariants (./invariants.ts).
 *
 * PAYKIT_MODEL_RUNS / PAYKIT_MODEL_SEED change the number of sequences and the seed; the
 * `model` package script runs 100,000 (scripts/model.ts).
 */
import * as fc from "fast-check"
import { describe, it } from "vitest"
import { lifecycleProperty } from "./commands"
import { coverage } from "./runner"

const RUNS = Number(process.env["PAYKIT_MODEL_RUNS"] ?? 2000)
const SEED = process.env["PAYKIT_MODEL_SEED"] === undefined ? undefined : Number(process.env["PAYKIT_MODEL_SEED"])
const MAX_COMMANDS = 16

describe("order lifecycles against the reference model", () => {
  it(`${RUNS} random sequences agree with the model at every step`, { timeout: 600_000 }, async () => {
    await fc.assert(lifecycleProperty(MAX_COMMANDS), { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) })
    if (process.env["PAYKIT_MODEL_COVERAGE"] !== undefined) console.log(Object.entries(coverage).sort().map(([k, v]) => `${k}: ${v}`).join("\n"))
  })
})
