/**
 * One client instance's link to the shared store: a `PayStoreService` that passes every call on
 * to the real store, and can stall (calls wait until released, then go on, fail before reaching
 * the store, or reach it and still fail), die with its instance (nothing it sends leaves, nothing
 * comes back), and tells the virtual clock while a call is out at the store. Every method of the
 * service is wrapped, whatever the service offers, so the link follows the store's interface as it
 * changes.
 *
 * @packageDocumentation
 */
import { Effect } from "effect"
import { StoreError, type PayStoreService } from "../../src/index"
import type { VirtualTime } from "./virtual-time"

/** Store methods that sleep between their own queries (the clock moves while they wait). */
const WAITS_ON_THE_CLOCK: ReadonlySet<string> = new Set(["awaitIntent"])

/** How a stall ends for the calls it held. */
export type Unstall = "ok" | "fail" | "failAfter"

/** A stalled link: its held calls, and how they will go on. */
interface Stall {
  readonly release: Promise<Unstall | "dead">
  readonly end: (how: Unstall | "dead") => void
}

/** The link of one instance. */
export class StoreLink {
  /** The service the instance's client is given. */
  readonly service: PayStoreService
  private stall: Stall | undefined
  private dead = false
  /** Calls held by the current stall. */
  held = 0

  /**
   * What a dead instance's call waits on: nothing until the world is buried, then an interruption
   * (a crashed process's fibers are gone; a run of many sequences must not keep them).
   */
  private readonly grave: Effect.Effect<never>

  constructor(
    readonly base: PayStoreService,
    private readonly time: VirtualTime,
    /** Told of each `recordOutcome` as it is asked (before a stall can hold it). */
    private readonly onOutcome: (key: string, outcome: unknown) => void,
    /** Settles when the sequence's world is closed. */
    burial: Promise<void>
  ) {
    this.grave = Effect.flatMap(Effect.promise(() => burial), () => Effect.interrupt)
    const service: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(base)) {
      service[name] = typeof value === "function" && name !== "close" ? this.wrap(name, value as (...a: Array<unknown>) => Effect.Effect<unknown, unknown>) : value
    }
    this.service = service as unknown as PayStoreService
  }

  get stalled(): boolean {
    return this.stall !== undefined
  }

  /** From now on, calls wait for {@link unstall}. */
  stallNow(): void {
    if (this.stall !== undefined || this.dead) return
    let end!: (how: Unstall | "dead") => void
    const release = new Promise<Unstall | "dead">((resolve) => {
      end = resolve
    })
    this.stall = { release, end }
  }

  /** Lets the held calls go on as `how`; later calls run normally. */
  unstall(how: Unstall): void {
    const stall = this.stall
    this.stall = undefined
    this.held = 0
    stall?.end(how)
  }

  /** The instance died: held calls never run, and nothing answers any call again. */
  kill(): void {
    this.dead = true
    const stall = this.stall
    this.stall = undefined
    stall?.end("dead")
  }

  private wrap(name: string, method: (...a: Array<unknown>) => Effect.Effect<unknown, unknown>) {
    const failure = () => new StoreError({ method: name, adapter: this.base.adapter, reason: "model: the database stopped answering" })
    const run = (args: Array<unknown>): Effect.Effect<unknown, unknown> =>
      Effect.suspend(() => {
        if (this.dead) return this.grave
        // A method that waits on the clock itself (polling) must let it move.
        const done = WAITS_ON_THE_CLOCK.has(name) ? () => undefined : this.time.enterExternal()
        return method.apply(this.base, args).pipe(
          Effect.ensuring(Effect.sync(done)),
          // A dead instance hears nothing back, not even a failure.
          Effect.flatMap((a) => (this.dead ? this.grave : Effect.succeed(a))),
          Effect.catchAll((e) => (this.dead ? this.grave : Effect.fail(e)))
        )
      })
    return (...args: Array<unknown>): Effect.Effect<unknown, unknown> =>
      Effect.suspend(() => {
        if (name === "recordOutcome") this.onOutcome(args[0] as string, args[1])
        if (this.dead) return this.grave
        const stall = this.stall
        if (stall === undefined) return run(args)
        this.held++
        return Effect.flatMap(Effect.promise(() => stall.release), (how) => {
          switch (how) {
            case "dead":
              return this.grave
            case "ok":
              return run(args)
            case "fail":
              return Effect.fail(failure())
            case "failAfter":
              return Effect.flatMap(Effect.either(run(args)), () => Effect.fail(failure()))
          }
        })
      })
  }
}
