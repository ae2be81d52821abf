/**
 * The protocol model (protocol-model.ts) on the memory store and on PGlite: `PAYKIT_MODEL_RUNS`
 * sequences in all (default 2000: 80 % on memory, 20 % on PGlite, whose queries cost
 * more), each of up to 20 steps. `scripts/model.mjs` runs 100,000 per store.
 *
 * A failure is an invariant that broke: the error is the shrunk sequence, with a
 * `replaySequence(...)` to paste into a regression test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { modelRuns, runModel } from "./run-model"
import { memoryModelStore, pgliteModelStore, type ModelStore } from "./stores"

const MAX_COMMANDS = 20

describe("the money-call protocol model", () => {
  it(`memory store: ${modelRuns(0.8)} sequences keep every invariant`, async () => {
    const { sequences } = await runModel(memoryModelStore(), modelRuns(0.8), MAX_COMMANDS)
    expect(sequences).toBe(modelRuns(0.8))
  }, 600_000)

  describe("PGlite", () => {
    let store: ModelStore
    beforeAll(async () => {
      store = await pgliteModelStore()
    }, 120_000)
    afterAll(async () => {
      await store?.close()
    })

    it(`PGlite store: ${modelRuns(0.2)} sequences keep every invariant`, async () => {
      const { sequences } = await runModel(store, modelRuns(0.2), MAX_COMMANDS)
      expect(sequences).toBe(modelRuns(0.2))
    }, 600_000)
  })
})
