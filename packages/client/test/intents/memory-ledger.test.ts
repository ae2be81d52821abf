/**
 * The in-memory ledger's keys (src/intents/ledger.ts): what `begin` answers for a key after any
 * sequence of calls under it, against a model of the rules in a few lines; how many succeeded keys
 * it keeps for replay; and the copies it keeps and hands out.
 */
import * as Exit from "effect/Exit"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ReconcileError } from "../../src/errors"
import { detachedResult, memoryIntentLedger, type SyncIntentLedger } from "../../src/intents/ledger"

const failure = (tag: string): Exit.Exit<unknown, ReconcileError> => Exit.fail({ _tag: tag } as unknown as ReconcileError)

/** Begins `key` and, when the ledger says Fresh, ends it at once with a result; the result's tag. */
function succeed(ledger: SyncIntentLedger, key: string, result: unknown = { type: "async-response", key }): string {
  const begun = ledger.begin(key, `fp-${key}`)
  if (begun._tag === "Fresh") ledger.finish(begun.intent, Exit.succeed(result), false)
  return begun._tag
}

describe("succeeded keys kept for replay", () => {
  it("keeps exactly the last maxDone succeeded keys", () => {
    const ledger = memoryIntentLedger(3).sync!
    for (let i = 0; i < 10; i++) expect(succeed(ledger, `k${i}`)).toBe("Fresh")
    for (let i = 0; i < 7; i++) expect(ledger.begin(`k${i}`, `fp-k${i}`)._tag, `k${i}`).toBe("Fresh")
    for (let i = 7; i < 10; i++) expect(ledger.begin(`k${i}`, `fp-k${i}`)._tag, `k${i}`).toBe("Replay")
  })

  it("a key dropped and succeeded again is kept as the newest", () => {
    const ledger = memoryIntentLedger(2).sync!
    for (const k of ["a", "b", "c"]) succeed(ledger, k)
    expect(succeed(ledger, "a")).toBe("Fresh")
    expect(succeed(ledger, "d")).toBe("Fresh")
    expect(["a", "b", "c", "d"].map((k) => ledger.begin(k, `fp-${k}`)._tag)).toEqual(["Replay", "Fresh", "Fresh", "Replay"])
  })

  it("with maxDone 0 nothing replays, and a key still refuses another request while it runs", () => {
    const ledger = memoryIntentLedger(0).sync!
    expect(succeed(ledger, "a")).toBe("Fresh")
    const begun = ledger.begin("a", "fp-a")
    expect(begun._tag).toBe("Fresh")
    expect(ledger.begin("a", "fp-other")._tag).toBe("KeyReused")
  })
})

type Outcome = "success" | "unknown" | "nothing-moved" | "final-failure"
/** A call under key `k<key>` for request `variant` (two variants: the same request, or another one under the key). */
type Step = { readonly key: number; readonly variant: number; readonly outcome: Outcome }
const fingerprintOf = (step: Step): string => `fp-${step.key}-${step.variant}`

/**
 * The rules as a model: a succeeded key replays while it is among the last `maxDone` successes; a
 * final failure replays for good; an unknown outcome is resumed by the next call; a failure that
 * moved nothing forgets the key. A kept key refuses any request but its own.
 */
class Model {
  private readonly successes: Array<number> = []
  private readonly finalFailures = new Set<number>()
  private readonly unknown = new Set<number>()
  private readonly fingerprints = new Map<number, string>()
  constructor(private readonly maxDone: number) {}

  expected(step: Step): string {
    const replays = this.successes.includes(step.key) || this.finalFailures.has(step.key)
    if (!replays && !this.unknown.has(step.key)) return "Fresh"
    if (this.fingerprints.get(step.key) !== fingerprintOf(step)) return "KeyReused"
    return replays ? "Replay" : "Resume"
  }

  ended(step: Step): void {
    this.unknown.delete(step.key)
    this.fingerprints.set(step.key, fingerprintOf(step))
    if (step.outcome === "success") {
      this.successes.push(step.key)
      if (this.successes.length > this.maxDone) this.successes.shift()
    } else if (step.outcome === "unknown") this.unknown.add(step.key)
    else if (step.outcome === "final-failure") this.finalFailures.add(step.key)
  }
}

const exitOf: Record<Outcome, Exit.Exit<unknown, ReconcileError>> = {
  success: Exit.succeed({ type: "async-response", status: "processing" }),
  unknown: failure("OutcomeUnknown"),
  "nothing-moved": failure("NotApplied"),
  "final-failure": failure("ReconcileConflict")
}

describe("begin after any sequence of calls under a few keys", () => {
  it("answers as the model of the ledger's rules does", () => {
    const step = fc.record({
      key: fc.integer({ min: 0, max: 5 }),
      variant: fc.integer({ min: 0, max: 3 }).map((n) => (n === 0 ? 1 : 0)),
      outcome: fc.constantFrom<Outcome>("success", "success", "unknown", "nothing-moved", "final-failure")
    })
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.array(step, { maxLength: 60 }), (maxDone, steps) => {
        const ledger = memoryIntentLedger(maxDone).sync!
        const model = new Model(maxDone)
        for (const s of steps) {
          const begun = ledger.begin(`k${s.key}`, fingerprintOf(s))
          expect(begun._tag).toBe(model.expected(s))
          if (begun._tag === "Fresh" || begun._tag === "Resume") {
            ledger.finish(begun.intent, exitOf[s.outcome], s.outcome === "unknown")
            model.ended(s)
          }
        }
      }),
      { numRuns: 400 }
    )
  })
})

describe("detachedResult", () => {
  it("copies plain objects and arrays at every depth and shares nothing else", () => {
    const when = new Date(0)
    const value = { type: "reconciled", before: { amount: "10.00", history: [{ n: 1 }] }, when, list: ["a"] }
    const copy = detachedResult(value)
    expect(copy).toStrictEqual(value)
    expect(copy).not.toBe(value)
    expect(copy.before).not.toBe(value.before)
    expect(copy.before.history).not.toBe(value.before.history)
    expect(copy.before.history[0]).not.toBe(value.before.history[0])
    expect(copy.list).not.toBe(value.list)
    expect(copy.when).toBe(when)
  })

  it("keeps an own `__proto__` key as a key, never as the copy's prototype", () => {
    const value = JSON.parse('{"type":"async-response","__proto__":{"polluted":"yes"}}') as Record<string, unknown>
    const copy = detachedResult(value)
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(["type", "__proto__"])
    expect((copy as { polluted?: string }).polluted).toBeUndefined()
  })
})
