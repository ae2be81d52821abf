/**
 * The model's clock: `setTimeout`, `setInterval`, `Date` and `performance.now()` replaced by a
 * virtual clock that moves only when the model says so (`advance`), as the controlled clock of
 * `support/test-time.ts` does for the other client tests. Two things differ, and are why the model
 * has its own: it runs outside vitest too (`scripts/model.mjs` runs 100,000 sequences in plain Node,
 * where vitest's fake timers do not exist), and it never moves while a store call is out
 * (`external`): a PGlite or PostgreSQL query then takes no virtual time, as every in-memory step
 * does, so a sequence is replayed the same on any machine and a shrunk counterexample stays one.
 *
 * Between two commands the world runs until nothing can run without time passing (`drain`):
 * every microtask, every timer already due, every store call out.
 *
 * @packageDocumentation
 */

interface Timer {
  readonly id: number
  at: number
  readonly seq: number
  readonly fn: (...args: Array<unknown>) => void
  readonly args: Array<unknown>
  readonly every: number | undefined
}

// What the model replaces, taken before it replaces anything.
const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  Date: globalThis.Date,
  performanceNow: globalThis.performance.now.bind(globalThis.performance)
}

/** Real milliseconds (a monotonic clock the model never moves): for progress and run times. */
export const realNow = (): number => real.performanceNow()

/** A turn of the real event loop: every microtask queued before it has run. */
export const realTurn = (): Promise<void> => new Promise((resolve) => real.setImmediate(resolve))

/** The handle a virtual `setTimeout` returns: Node's `Timeout` shape, enough for `ref`/`unref` callers. */
class Handle {
  constructor(readonly id: number) {}
  ref(): this {
    return this
  }
  unref(): this {
    return this
  }
  hasRef(): boolean {
    return true
  }
  refresh(): this {
    return this
  }
  [Symbol.toPrimitive](): number {
    return this.id
  }
}

/** A virtual clock over the process's timer globals (one per process; see {@link VirtualTime.install}). */
export class VirtualTime {
  now: number
  private readonly timers = new Map<number, Timer>()
  // Due timers are found by a scan: a sequence keeps a few dozen at most.
  private nextId = 1
  private nextSeq = 0
  private external = 0
  private wakeExternal: (() => void) | undefined
  private installed = false
  private readonly origin: number

  constructor(start: number) {
    this.now = start
    this.origin = start - real.performanceNow()
  }

  /** Replaces the timer and time globals by this clock's (until {@link uninstall}). */
  install(): void {
    if (this.installed) return
    this.installed = true
    const time = this
    const g = globalThis as unknown as Record<string, unknown>
    g["setTimeout"] = (fn: (...a: Array<unknown>) => void, ms?: number, ...args: Array<unknown>) => time.schedule(fn, ms, args, undefined)
    g["setInterval"] = (fn: (...a: Array<unknown>) => void, ms?: number, ...args: Array<unknown>) => time.schedule(fn, ms, args, Math.max(1, Number(ms) || 0))
    g["clearTimeout"] = (h: unknown) => time.clear(h)
    g["clearInterval"] = (h: unknown) => time.clear(h)
    const RealDate = real.Date
    class VirtualDate extends RealDate {
      constructor(...args: Array<unknown>) {
        if (args.length === 0) super(time.now)
        else super(...(args as [number]))
      }
      static override now(): number {
        return time.now
      }
    }
    g["Date"] = VirtualDate
    Object.defineProperty(globalThis.performance, "now", { value: () => time.now - time.origin, configurable: true, writable: true })
  }

  /** Puts the real globals back. */
  uninstall(): void {
    if (!this.installed) return
    this.installed = false
    const g = globalThis as unknown as Record<string, unknown>
    g["setTimeout"] = real.setTimeout
    g["setInterval"] = real.setInterval
    g["clearTimeout"] = real.clearTimeout
    g["clearInterval"] = real.clearInterval
    g["Date"] = real.Date
    delete (globalThis.performance as unknown as Record<string, unknown>)["now"]
  }

  /** Starts an external piece of work; the returned function ends it. */
  enterExternal(): () => void {
    this.external++
    let open = true
    return () => {
      if (!open) return
      open = false
      this.external--
      if (this.external === 0) this.wakeExternal?.()
    }
  }

  /**
   * Runs the world without moving the clock: microtasks, timers due now, external work, until a
   * whole round finds nothing to do. A real-time guard ends a drain that cannot finish (external
   * work that never settles) with an error naming it.
   */
  async drain(guardMs = 60_000): Promise<void> {
    const started = real.performanceNow()
    let quiet = 0
    while (quiet < 2) {
      await realTurn()
      // A timer due now runs whatever else is out: it does not move the clock.
      const due = this.firstDue(this.now)
      if (due !== undefined) {
        this.fire(due)
        quiet = 0
        continue
      }
      if (this.external > 0) {
        if (real.performanceNow() - started > guardMs) throw new Error(`virtual time: ${this.external} store call(s) still out after ${guardMs} ms of real time`)
        this.externalWaits++
        await new Promise<void>((resolve) => {
          this.wakeExternal = resolve
          // A short real timer as well: a drain must not sleep through an external end it missed.
          real.setTimeout(resolve, 1)
        })
        this.wakeExternal = undefined
        quiet = 0
        continue
      }
      quiet++
    }
  }

  /** Timers not yet fired (a sequence's world leaves none behind when it closes). */
  get pending(): number {
    return this.timers.size
  }

  /** How often a drain waited for a store call (a measure of the store's share of a run). */
  externalWaits = 0

  /** Moves the clock `ms` forward, firing each timer at its time and draining between them. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms
    await this.drain()
    for (;;) {
      const next = this.firstDue(target)
      if (next === undefined) break
      if (next.at > this.now) this.now = next.at
      this.fire(next)
      await this.drain()
    }
    this.now = target
    await this.drain()
  }

  private schedule(fn: (...a: Array<unknown>) => void, ms: number | undefined, args: Array<unknown>, every: number | undefined): Handle {
    const id = this.nextId++
    const delay = Math.max(0, Number(ms) || 0)
    this.timers.set(id, { id, at: this.now + delay, seq: this.nextSeq++, fn, args, every })
    return new Handle(id)
  }

  private clear(handle: unknown): void {
    if (handle === undefined || handle === null) return
    const id = typeof handle === "number" ? handle : handle instanceof Handle ? handle.id : Number(handle)
    const t = this.timers.get(id)
    if (t === undefined) return
    this.timers.delete(id)
  }

  private firstDue(limit: number): Timer | undefined {
    let best: Timer | undefined
    for (const t of this.timers.values()) {
      if (t.at > limit) continue
      if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t
    }
    return best
  }

  private fire(t: Timer): void {
    if (t.every === undefined) this.timers.delete(t.id)
    else {
      t.at += t.every
      ;(t as { seq: number }).seq = this.nextSeq++
    }
    t.fn(...t.args)
  }
}
