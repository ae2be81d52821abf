/**
 * A model of the money-call protocol (fast-check `fc.commands`): N client instances over one
 * shared `PayStore`, the in-process simulator behind a faulty network, and commands for what a
 * fleet meets: sales and preauths, captures / returns / voids under merchant keys from a small pool
 * (so keys repeat), crashes with a fresh instance on the same store, a caller's interruption, lease
 * expiry (the clock moving), the store stalling and failing, the gateway holding, dropping and
 * losing replies or answering 500, `status` down, the gateway forgetting old orders, captures made
 * in the back office, and `recover()` on a schedule. After every step, and once everything has
 * landed and `recover()` has run at the end, the invariants hold (world.ts `check`):
 *
 * 1. each idempotency key moves money at most once;
 * 2. each order's money is what the model's requests moved (nothing else moved it, and its captured
 *    figure is their sum);
 * 3. every call ends applied / not-applied / conflict / unknown and never a wrong one: a success
 *    moved its key's money, a not-applied (from a call or from `recover()`) follows no send of its
 *    key that moved money, a "nothing was sent" answer follows no send of the call.
 *
 * A command is plain data ({@link Step}): a failing sequence prints as a list that
 * {@link replaySequence} runs again, without fast-check.
 *
 * @packageDocumentation
 */
import fc from "fast-check"
import type { FaultKind, FaultTarget } from "./gateway"
import type { Unstall } from "./store-link"
import type { ModelStore } from "./stores"
import { VirtualTime } from "./virtual-time"
import { ORDER_KEYS, SALE_KEYS, type Style, type WorldConfig } from "./config"
import { World, type NetFault } from "./world"

/**
 * One step of a sequence. `net`, on a call, is a fault of the network for its key's next send;
 * `down` takes `status` down from that send for that long (a partition).
 */
export type Step =
  | { readonly c: "sale"; readonly slot: number; readonly s: number; readonly long?: boolean | undefined; readonly net?: FaultKind | undefined; readonly down?: number | undefined }
  | { readonly c: "call"; readonly slot: number; readonly s: number; readonly k: number; readonly long?: boolean | undefined; readonly net?: FaultKind | undefined; readonly down?: number | undefined }
  /** The call of the `pick`-th key used so far (modulo their number), again: a merchant's retry. */
  | { readonly c: "again"; readonly slot: number; readonly pick: number; readonly long?: boolean | undefined; readonly net?: FaultKind | undefined; readonly down?: number | undefined }
  /** A back-office capture or return on order `s`; `amount` (never generated) only in written cases. */
  | { readonly c: "backOffice"; readonly s: number; readonly amount?: string | undefined }
  | { readonly c: "recover"; readonly slot: number }
  | { readonly c: "advance"; readonly ms: number }
  | { readonly c: "crash"; readonly slot: number }
  | { readonly c: "interrupt"; readonly slot: number }
  | { readonly c: "stall"; readonly slot: number }
  | { readonly c: "unstall"; readonly slot: number; readonly how: Unstall }
  | { readonly c: "fault"; readonly target: FaultTarget; readonly kind: FaultKind; readonly count: number; readonly ms?: number }
  | { readonly c: "statusDown"; readonly ms: number }

/** A call's own `hold`: as long as the network may hold a request (just under the window). */
const HOLD_MS = 299

/** The most instances a sequence has. */
export const MAX_INSTANCES = 3

/** A sequence's configuration. */
export const configArbitrary: fc.Arbitrary<WorldConfig> = fc
  .record({
    instances: fc.array(fc.constantFrom<Style>("promise", "effect"), { minLength: 2, maxLength: MAX_INSTANCES }),
    // The gateway forgets nothing, old orders by count (2 or 3 kept), or each order 4 s after its last transaction.
    forget: fc.constantFrom<readonly [number | null, number | null]>([null, null], [2, null], [3, null], [null, 4000]),
    recoverEveryMs: fc.constantFrom<number | null>(null, 1000, 2500),
    intentLeaseMs: fc.constantFrom(2100, 3000)
  })
  .map(({ forget, ...rest }): WorldConfig => ({ ...rest, maxOrders: forget[0], maxAgeMs: forget[1] }))

const slot = fc.integer({ min: 0, max: MAX_INSTANCES - 1 })
const step = <S extends Step>(arb: fc.Arbitrary<S>) => arb as fc.Arbitrary<Step>
// A deadline longer than the lease now and then (a call that outlives its lease); most calls
// keep the client's. Without them, every policy follows docs/fleet.md to the letter.
const longOf = (allowed: boolean) => (allowed ? fc.constantFrom(false, false, false, false, true) : fc.constant(false))
// Most calls meet a healthy network; the rest one of its faults (no hold: a call's own hold is a slow reply).
const net = fc.option(fc.constantFrom<FaultKind>("lose", "lose", "drop", "fail500", "fail500after", "hold"), { freq: 2, nil: undefined })
// The opening orders (0 preauth, 1 sale) take most calls; keys 0 and 1 (the same amount) most of those.
const orderS = fc.constantFrom(0, 0, 0, 1, 1, 2, 3)
const orderK = fc.constantFrom(0, 0, 0, 1, 1, 2, 3)
const down = fc.constantFrom<number | undefined>(undefined, undefined, 1000, 2500)
// A step as compact as it can print: no `net` without a fault, no `down` without a partition.
const withNet = <S extends { net?: FaultKind | undefined; down?: number | undefined }>(r: S): S => {
  const { net: n, down: d, ...rest } = r
  return { ...rest, ...(n === undefined ? {} : { net: n, ...(d === undefined ? {} : { down: d }) }) } as S
}

/**
 * The steps, weighted toward calls and retries (faults are only interesting with calls to hit).
 * `longDeadlines: false` leaves out per-call deadlines longer than the intent lease.
 */
export const stepArbitrary = (longDeadlines = true): fc.Arbitrary<Step> => {
  const long = longOf(longDeadlines)
  return fc.oneof(
  { weight: 3, arbitrary: step(fc.record({ c: fc.constant("sale" as const), slot, s: fc.integer({ min: 0, max: SALE_KEYS - 1 }), long, net, down }).map(withNet)) },
  { weight: 6, arbitrary: step(fc.record({ c: fc.constant("call" as const), slot, s: orderS, k: orderK, long, net, down }).map(withNet)) },
  { weight: 6, arbitrary: step(fc.record({ c: fc.constant("again" as const), slot, pick: fc.constantFrom(0, 0, 0, 1, 1, 2, 3), long, net, down }).map(withNet)) },
  { weight: 1, arbitrary: step(fc.record({ c: fc.constant("backOffice" as const), s: orderS })) },
  { weight: 3, arbitrary: step(fc.record({ c: fc.constant("recover" as const), slot })) },
  { weight: 8, arbitrary: step(fc.record({ c: fc.constant("advance" as const), ms: fc.constantFrom(10, 100, 300, 1000, 2500, 3500) })) },
  { weight: 2, arbitrary: step(fc.record({ c: fc.constant("crash" as const), slot })) },
  { weight: 1, arbitrary: step(fc.record({ c: fc.constant("interrupt" as const), slot })) },
  { weight: 1, arbitrary: step(fc.record({ c: fc.constant("stall" as const), slot })) },
  { weight: 1, arbitrary: step(fc.record({ c: fc.constant("unstall" as const), slot, how: fc.constantFrom<Unstall>("ok", "ok", "fail", "failAfter") })) },
  {
    weight: 2,
    arbitrary: step(fc.oneof(
      fc.record({
        c: fc.constant("fault" as const),
        target: fc.constantFrom<FaultTarget>("sale", "money", "status"),
        kind: fc.constantFrom<FaultKind>("lose", "fail500", "fail500after", "drop"),
        count: fc.integer({ min: 1, max: 3 })
      }),
      fc.record({
        c: fc.constant("fault" as const),
        target: fc.constantFrom<FaultTarget>("sale", "money", "status"),
        kind: fc.constant<FaultKind>("hold"),
        count: fc.integer({ min: 1, max: 2 }),
        ms: fc.constantFrom(100, 250, 299)
      })
    ))
  },
  { weight: 3, arbitrary: step(fc.record({ c: fc.constant("statusDown" as const), ms: fc.constantFrom(200, 1000, 3000, 3000) })) }
  )
}

/** A step as code (what a counterexample prints). */
export const stepCode = (s: Step): string => JSON.stringify(s)

const netOf = (s: { readonly net?: FaultKind | undefined; readonly down?: number | undefined }): NetFault | undefined =>
  s.net === undefined ? undefined : { kind: s.net, ms: HOLD_MS, downMs: s.down }

/** Runs one step on the world. */
async function apply(world: World, s: Step): Promise<void> {
  const slots = world.config.instances.length
  switch (s.c) {
    case "sale":
      return world.sale(s.slot % slots, s.s, s.long === true, netOf(s))
    case "call":
      return world.orderCall(s.slot % slots, s.s, s.k, s.long === true, netOf(s))
    case "again":
      return world.again(s.slot % slots, s.pick, s.long === true, netOf(s))
    case "backOffice":
      return world.backOfficeCall(s.s, s.amount)
    case "recover":
      void world.recover(s.slot % slots)
      return
    case "advance":
      return world.advance(s.ms)
    case "crash":
      return world.crash(s.slot % slots)
    case "interrupt":
      return world.interrupt(s.slot % slots)
    case "stall":
      return world.stall(s.slot % slots)
    case "unstall":
      return world.unstall(s.slot % slots, s.how)
    case "fault":
      return world.fault({ target: s.target, kind: s.kind, count: s.count, ms: s.ms })
    case "statusDown":
      return world.statusDown(s.ms)
  }
}

/** A failed invariant, with what led to it. */
export class ModelViolation extends Error {
  constructor(
    readonly problems: ReadonlyArray<string>,
    readonly log: ReadonlyArray<string>,
    readonly atStep: number | "finish",
    /** The simulator's orders as last seen: what to check the problems against by hand. */
    readonly orders: ReadonlyArray<string> = []
  ) {
    super(
      `${problems.join("\n")}\n  (${atStep === "finish" ? "after everything landed and recover() ran" : `after step ${atStep}`})\n` +
        `  what happened:\n    ${log.slice(-80).join("\n    ")}\n` +
        (orders.length === 0 ? "" : `  the gateway's orders (as last seen):\n    ${orders.join("\n    ")}`)
    )
    this.name = "ModelViolation"
  }

  /** The violation of `world` at `atStep`. */
  static of(problems: ReadonlyArray<string>, world: World, atStep: number | "finish"): ModelViolation {
    return new ModelViolation(problems, world.book.log, atStep, ordersOf(world))
  }
}

// Each order's figures and transactions, and which key's send made each transaction.
function ordersOf(world: World): Array<string> {
  const out: Array<string> = []
  for (const o of world.book.orders.values()) {
    const txs = o.transactions.map((t) => `${t.type} ${t.amount ?? ""} ${t.status} (${world.book.bySerial.get(t.serialNumber)?.send.key ?? "no request of the model"})`)
    out.push(`${o.orderid} ${o.kind} ${o.client_orderid}${world.sim.order(o.orderid) === undefined ? " (forgotten)" : ""}: captured ${o.captured}, returned ${o.returned}, hold released ${o.holdReleased}, voided ${o.voided}; ${txs.join("; ")}`)
  }
  return out
}

let sequences = 0

/** Where the model runs: the store, the virtual clock (one per process) and a sequence counter. */
export interface ModelRuntime {
  readonly store: ModelStore
  readonly time: VirtualTime
}

// One virtual clock for the process: time never runs backwards from one sequence (or one test's
// replay) to the next, so what outlives a sequence (the cached simulators' clocks, the client's
// shared attempt timer) always sees it move forward.
let processTime: VirtualTime | undefined

/** The model's runtime on `store`; its clock is installed per sequence (restore it with `time.uninstall()`). */
export function modelRuntime(store: ModelStore): ModelRuntime {
  processTime ??= new VirtualTime(Date.now())
  return { store, time: processTime }
}

/** Runs one sequence: each step, the invariants after it, then everything landed, recover, the invariants. */
export async function runSequence(runtime: ModelRuntime, config: WorldConfig, steps: Iterable<Step>): Promise<World> {
  runtime.time.install()
  await runtime.store.begin()
  const world = await World.open(config, runtime.store, runtime.time, `m${(++sequences).toString(36)}`)
  try {
    let index = 0
    for (const s of steps) {
      world.book.note(`step ${index}: ${stepCode(s)}`)
      await apply(world, s)
      await world.settle()
      const problems = world.check()
      if (problems.length > 0) throw ModelViolation.of(problems, world, index)
      index++
    }
    const ending = await world.finish()
    const problems = [...ending, ...world.check()]
    if (problems.length > 0) throw ModelViolation.of(problems, world, "finish")
    return world
  } finally {
    await world.close()
    await runtime.store.end()
  }
}

/** A fast-check command around a {@link Step}: it always applies (a step on a missing order is a no-op). */
class StepCommand implements fc.AsyncCommand<object, { world: World; index: number }> {
  constructor(readonly step: Step) {}
  check(): boolean {
    return true
  }
  async run(_m: object, r: { world: World; index: number }): Promise<void> {
    const { world } = r
    world.book.note(`step ${r.index}: ${stepCode(this.step)}`)
    await apply(world, this.step)
    await world.settle()
    const problems = world.check()
    if (problems.length > 0) throw ModelViolation.of(problems, world, r.index)
    r.index++
  }
  toString(): string {
    return stepCode(this.step)
  }
}

/** The commands arbitrary of the model. */
export function commandsArbitrary(maxCommands: number, replayPath?: string, longDeadlines = true, without: ReadonlyArray<Step["c"]> = []) {
  const steps = without.length === 0 ? stepArbitrary(longDeadlines) : stepArbitrary(longDeadlines).filter((s) => !without.includes(s.c))
  return fc.commands([steps.map((s) => new StepCommand(s))], { maxCommands, size: "max", ...(replayPath === undefined ? {} : { replayPath }) })
}

/** How the property treats a sequence's violations. */
export interface PropertyOptions {
  /** The longest sequence (commands before the final landing). */
  readonly maxCommands: number
  /** Only problems this accepts fail the property (to shrink one kind of failure apart from the others). */
  readonly matches?: ((problem: string) => boolean) | undefined
  /** When given, a violation is handed here and the sequence passes (a survey of what fails). */
  readonly onViolation?: ((violation: ModelViolation, config: WorldConfig, steps: ReadonlyArray<Step>) => void) | undefined
  /** Configuration fields every sequence gets (the others are generated). */
  readonly pin?: Partial<WorldConfig> | undefined
  /** Calls may ask for a deadline longer than the intent lease (default `true`). */
  readonly longDeadlines?: boolean | undefined
  /** Kinds of step the sequences leave out (to tell which steps a failure needs). */
  readonly without?: ReadonlyArray<Step["c"]> | undefined
  /** fast-check's replay hint of a reported counterexample's commands (its `replayPath`). */
  readonly replayPath?: string | undefined
  /** Called after each sequence, with its world. */
  readonly onSequence?: ((world: World) => void) | undefined
}

/** The property: any configuration and command sequence keeps the invariants. */
export function protocolProperty(runtime: ModelRuntime, options: PropertyOptions) {
  const configs = options.pin === undefined ? configArbitrary : configArbitrary.map((c): WorldConfig => ({ ...c, ...options.pin }))
  return fc.asyncProperty(configs, commandsArbitrary(options.maxCommands, options.replayPath, options.longDeadlines ?? true, options.without), async (config, commands) => {
    runtime.time.install()
    await runtime.store.begin()
    const world = await World.open(config, runtime.store, runtime.time, `m${(++sequences).toString(36)}`)
    try {
      await fc.asyncModelRun(() => ({ model: {}, real: { world, index: 0 } }), commands)
      const ending = await world.finish()
      const problems = [...ending, ...world.check()]
      if (problems.length > 0) throw ModelViolation.of(problems, world, "finish")
    } catch (error) {
      if (!(error instanceof ModelViolation)) throw error
      const counted = options.matches === undefined ? error : new ModelViolation(error.problems.filter(options.matches), error.log, error.atStep, error.orders)
      if (counted.problems.length === 0) return
      if (options.onViolation !== undefined) options.onViolation(counted, config, stepsOf(commands))
      else throw counted
    } finally {
      await world.close()
      await runtime.store.end()
      options.onSequence?.(world)
    }
  })
}

/** The steps of a counterexample's commands (those that ran). */
export function stepsOf(commands: Iterable<unknown>): Array<Step> {
  const out: Array<Step> = []
  for (const c of commands) {
    const w = c as { hasRan?: boolean; cmd?: StepCommand }
    if (w.hasRan === true && w.cmd instanceof StepCommand) out.push(w.cmd.step)
  }
  return out
}

/**
 * A counterexample as code to paste: the replay of its steps (no fast-check needed) and the
 * `fc.assert` that finds it again.
 */
export function pasteable(storeName: string, config: WorldConfig, steps: ReadonlyArray<Step>, seed: number, path: string | undefined, commands?: unknown, cli?: { readonly maxCommands: number; readonly flags?: string }): string {
  const replayPath = commands === undefined ? undefined : /replayPath="([^"]*)"/.exec(String(commands))?.[1]
  const options = `{ maxCommands${replayPath === undefined ? "" : `, replayPath: ${JSON.stringify(replayPath)}`} }`
  const rerun = cli === undefined || path === undefined
    ? []
    : [`// Or from the command line:`, `//   node scripts/model.mjs --store ${storeName} --commands ${cli.maxCommands} --seed=${seed} --path ${path}${replayPath === undefined ? "" : ` --replay-path '${replayPath}'`}${cli.flags ?? ""}`]
  return [
    `// Replays step by step, printing everything that happened:`,
    `//   node scripts/model.mjs --store ${storeName} --replay '${JSON.stringify([config, steps])}'`,
    `// Replays without fast-check (packages/client/test/model/protocol-model.ts):`,
    `await replaySequence(${JSON.stringify(storeName)}, ${JSON.stringify(config)}, [`,
    ...steps.map((s, i) => `  ${stepCode(s)}${i < steps.length - 1 ? "," : ""}`),
    `])`,
    ...(path === undefined
      ? []
      : [`// Or again through fast-check:`, `fc.assert(protocolProperty(runtime, ${options}), { seed: ${seed}, path: ${JSON.stringify(path)}, endOnFailure: true })`]),
    ...rerun
  ].join("\n")
}

/**
 * Runs a counterexample's steps again on a fresh store of `storeName` (PostgreSQL from
 * `PAYKIT_DATABASE_URL`); resolves when every invariant held, rejects with the violation otherwise.
 */
export async function replaySequence(storeName: "memory" | "pglite" | "postgres", config: WorldConfig, steps: ReadonlyArray<Step>): Promise<World> {
  const { memoryModelStore, pgliteModelStore, postgresModelStore } = await import("./stores")
  const store = storeName === "memory"
    ? memoryModelStore()
    : storeName === "pglite"
    ? await pgliteModelStore()
    : await postgresModelStore(process.env["PAYKIT_DATABASE_URL"] ?? "")
  const runtime = modelRuntime(store)
  try {
    return await runSequence(runtime, config, steps)
  } finally {
    runtime.time.uninstall()
    await store.close()
  }
}
