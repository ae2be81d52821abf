/**
 * fast-check commands of a model run. A command is an intent (an operation on "some order", an
 * amount "around what is open") that becomes a concrete {@link Step} when it runs, against the
 * model's state at that moment; the step is what a counterexample prints. A pair carries a
 * `fc.scheduler` that interleaves its two requests inside the simulator.
 */
import * as fc from "fast-check"
import { ModelRun } from "./runner"
import { stepText, type CardName, type Step } from "./steps"
import { major } from "./money"

type AmountChoice =
  | { readonly kind: "none" }
  | { readonly kind: "open" }
  | { readonly kind: "over" }
  | { readonly kind: "original" }
  | { readonly kind: "part"; readonly permille: number }

type Intent =
  | { readonly op: "sale" | "preauth"; readonly cents: number; readonly card: CardName }
  | { readonly op: "capture" | "void" | "return"; readonly pick: number; readonly amount: AmountChoice }
  | { readonly op: "status" | "resend"; readonly pick: number }
  | { readonly op: "advance"; readonly ms: number }
  | { readonly op: "restart" }
  | { readonly op: "pair"; readonly a: Intent; readonly b: Intent; readonly scheduler: fc.Scheduler }

const MAGIC = new Set([4005, 4051, 5001])

const needsOrder = (intent: Intent): boolean =>
  intent.op === "pair" ? needsOrder(intent.a) || needsOrder(intent.b) : "pick" in intent

/** The concrete step an intent stands for now. */
function resolve(intent: Intent, run: ModelRun): Step {
  const model = run.model
  switch (intent.op) {
    case "sale":
    case "preauth":
      return { op: intent.op, amount: major(BigInt(MAGIC.has(intent.cents) ? intent.cents + 1 : intent.cents)), card: intent.card }
    case "status":
    case "resend":
      return { op: intent.op, order: intent.pick % model.orders.length }
    case "capture":
    case "void":
    case "return": {
      // Captures mostly go to preauths (a capture of a sale is refused: cheap to ask now and then).
      const preauths = model.orders.filter((o) => o.kind === "preauth")
      const index = intent.op === "capture" && preauths.length > 0 && intent.pick % 4 !== 0
        ? preauths[(intent.pick >> 2) % preauths.length]!.index
        : intent.pick % model.orders.length
      const order = model.orders[index]!
      const natural = model.natural(intent.op, order)
      const base = natural > 0n ? natural : order.amount
      const choice = intent.amount
      let cents: bigint | undefined
      if (choice.kind === "open") cents = natural > 0n ? natural : 1n
      else if (choice.kind === "over") cents = (natural > 0n ? natural : 0n) + 1n
      else if (choice.kind === "original") cents = order.amount
      else if (choice.kind === "part") cents = (base * BigInt(choice.permille)) / 1000n || 1n
      return cents === undefined ? { op: intent.op, order: index } : { op: intent.op, order: index, amount: major(cents) }
    }
    case "advance":
      return { op: "advance", ms: intent.ms }
    case "restart":
      return { op: "restart" }
    case "pair":
      return { op: "pair", a: resolve(intent.a, run), b: resolve(intent.b, run) }
  }
}

function intentText(intent: Intent): string {
  if (intent.op === "pair") return `pair(${intentText(intent.a)}, ${intentText(intent.b)})`
  return JSON.stringify(intent)
}

/** One command: resolves its intent against the run, then runs the step with every check. */
export class StepCommand implements fc.AsyncCommand<ModelRun, ModelRun> {
  step: Step | undefined

  constructor(readonly intent: Intent) {}

  check(run: Readonly<ModelRun>): boolean {
    return !needsOrder(this.intent) || run.model.orders.length > 0
  }

  async run(_model: ModelRun, run: ModelRun): Promise<void> {
    this.step = resolve(this.intent, run)
    await run.step(this.step, this.intent.op === "pair" ? this.intent.scheduler : undefined)
  }

  toString(): string {
    return this.step === undefined ? intentText(this.intent) : stepText(this.step)
  }

  [fc.cloneMethod](): StepCommand {
    return new StepCommand(cloneIntent(this.intent))
  }
}

function cloneIntent(intent: Intent): Intent {
  if (intent.op !== "pair") return intent
  const scheduler = intent.scheduler as fc.Scheduler & { [fc.cloneMethod]?: () => fc.Scheduler }
  return { ...intent, a: cloneIntent(intent.a), b: cloneIntent(intent.b), scheduler: scheduler[fc.cloneMethod]?.() ?? scheduler }
}

const cardArb: fc.Arbitrary<CardName> = fc.oneof(
  { weight: 6, arbitrary: fc.constant("approved" as const) },
  { weight: 1, arbitrary: fc.constantFrom("declined" as const, "error" as const, "filtered" as const) }
)
const centsArb = fc.oneof(fc.constantFrom(10_000, 1_000), fc.integer({ min: 1, max: 30_000 }))
const amountArb = (op: "capture" | "void" | "return"): fc.Arbitrary<AmountChoice> =>
  fc.oneof(
    { weight: op === "void" ? 5 : 3, arbitrary: fc.constant({ kind: "none" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "open" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "over" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "original" as const }) },
    { weight: op === "void" ? 1 : 3, arbitrary: fc.integer({ min: 1, max: 999 }).map((permille) => ({ kind: "part" as const, permille })) }
  )
/** Clock advances: zero (requests meet others still processing), below, at and past the processing delay, and past settlement. */
const advanceArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 999 }) },
  { weight: 4, arbitrary: fc.constant(1000) },
  { weight: 3, arbitrary: fc.integer({ min: 1001, max: 4000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 19_000, max: 25_000 }) }
)
const pick = fc.nat({ max: 1 << 16 })

const requestIntent: fc.Arbitrary<Intent> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant("sale" as const), cents: centsArb, card: cardArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("preauth" as const), cents: centsArb, card: cardArb }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("capture" as const), pick, amount: amountArb("capture") }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("void" as const), pick, amount: amountArb("void") }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("return" as const), pick, amount: amountArb("return") }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("status" as const), pick }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("resend" as const), pick }) }
)

const advanceIntent: fc.Arbitrary<Intent> = advanceArb.map((ms) => ({ op: "advance" as const, ms }))

/** Every command, weighted: mostly single requests and clock moves, some pairs, few restarts. */
export const commandArb: fc.Arbitrary<StepCommand> = fc.oneof(
  { weight: 16, arbitrary: requestIntent.map((intent) => new StepCommand(intent)) },
  { weight: 7, arbitrary: advanceIntent.map((intent) => new StepCommand(intent)) },
  { weight: 1, arbitrary: fc.constant(null).map(() => new StepCommand({ op: "restart" })) },
  {
    weight: 3,
    arbitrary: fc.record({
      a: requestIntent,
      b: fc.oneof({ weight: 3, arbitrary: requestIntent }, { weight: 1, arbitrary: advanceIntent }),
      scheduler: fc.scheduler()
    }).map(({ a, b, scheduler }) => new StepCommand({ op: "pair", a, b, scheduler }))
  }
)

/** A whole sequence: at most `maxCommands` commands. */
export function sequences(maxCommands: number): fc.Arbitrary<Iterable<fc.AsyncCommand<ModelRun, ModelRun>>> {
  return fc.commands([commandArb], { maxCommands, size: "max" })
}

/** The property: any sequence leaves the simulator agreeing with the model at every step. */
export function lifecycleProperty(maxCommands: number, onRun?: (run: ModelRun) => void) {
  return fc.asyncProperty(sequences(maxCommands), async (cmds) => {
    const run = new ModelRun()
    onRun?.(run)
    try {
      await fc.asyncModelRun(() => ({ model: run, real: run }), cmds)
    } finally {
      await run.close()
    }
  })
}
