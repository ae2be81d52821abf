/**
 * The simulator clock and its scheduler. Everything time-based (finalisation, settlement, callback
 * retries, recurring charges) is a task on this clock, so tests control time exactly with `advance`
 * instead of sleeping.
 *
 * @packageDocumentation
 */

import { TaskQueue, type Task } from "./task-queue"

/** A clock with a time-ordered task queue. */
export class SimClock {
  private offset = 0
  private readonly base: number
  private readonly real: boolean
  private tasks = new TaskQueue()
  private seq = 0
  private readonly pending = new Set<Promise<void>>()
  private timer: ReturnType<typeof setInterval> | undefined
  private draining = false

  constructor(mode: "virtual" | "real", startTime: number | undefined) {
    this.real = mode === "real"
    this.base = startTime ?? Date.now()
    if (this.real) {
      this.offset = startTime === undefined ? 0 : startTime - Date.now()
      // Real time moves by itself: look for due tasks a few times a second. unref() so an idle
      // simulator never keeps a process alive.
      this.timer = setInterval(() => this.runDue(), 100)
      this.timer.unref()
    }
  }

  /** Current time in epoch ms. */
  now(): number {
    return this.real ? Date.now() + this.offset : this.base + this.offset
  }

  /** Whether the clock follows wall time. */
  get isReal(): boolean {
    return this.real
  }

  /**
   * Queues `run` at `at`; tasks at the same time run in the order they were queued. `job` is the
   * JSON-safe record of the same work: snapshots keep it and a restored simulator rebuilds `run`.
   */
  schedule(at: number, job: unknown, run?: () => void | Promise<void>): void {
    // Thousands of pending settlements must not make each insert O(n) (task-queue.ts).
    this.tasks.push({ at, seq: this.seq++, run, job })
  }

  /** Does a task queued without its own `run` (set once by the engine: one function for every job record). */
  runner: (job: unknown, at: number) => void | Promise<void> = () => undefined

  /** Every queued task's time and job record, in the order they will run. */
  pendingJobs(): Array<{ at: number; job: unknown }> {
    return this.tasks.sorted().map((task) => ({ at: task.at, job: task.job }))
  }

  /** Calls `f` with every queued task's job record, in no particular order (no copy, no sort). */
  forEachJob(f: (job: unknown) => void): void {
    this.tasks.forEach((task) => f(task.job))
  }

  /** Drops every queued task whose job record `drop` names (retention: work of forgotten orders). */
  dropJobs(drop: (job: unknown) => boolean): void {
    this.tasks.keep((task) => !drop(task.job))
  }

  /**
   * Runs every task due now. Asynchronous work (callback deliveries) is not awaited here, so a
   * request never waits for a merchant; `advance` and `settle` await it.
   */
  runDue(): void {
    if (this.draining) return
    this.draining = true
    try {
      const now = this.now()
      for (;;) {
        const next = this.tasks.peek()
        if (next === undefined || next.at > now) break
        this.tasks.pop()
        this.start(next)
      }
    } finally {
      this.draining = false
    }
  }

  private start(task: Task): void {
    let result: void | Promise<void>
    try {
      result = task.run === undefined ? this.runner(task.job, task.at) : task.run()
    } catch {
      return
    }
    if (result instanceof Promise) {
      const p: Promise<void> = result.catch(() => undefined).finally(() => this.pending.delete(p))
      this.pending.add(p)
    }
  }

  /** Tracks asynchronous work started outside a task (e.g. a callback sent from a page), so `advance` awaits it. */
  track(work: Promise<void>): void {
    const p: Promise<void> = work.catch(() => undefined).finally(() => this.pending.delete(p))
    this.pending.add(p)
  }

  /** Waits until every started asynchronous task has finished (including ones they start). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
  }

  /**
   * Moves the clock forward by `ms`, running every task that falls due in time order (the clock
   * shows each task's own time while it runs) and awaiting its asynchronous work.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("advance needs a non-negative number of ms")
    const target = this.now() + ms
    await this.settle()
    for (;;) {
      const next = this.tasks.peek()
      if (next === undefined || next.at > target) break
      this.tasks.pop()
      if (next.at > this.now()) this.offset += next.at - this.now()
      this.start(next)
      await this.settle()
    }
    if (target > this.now()) this.offset += target - this.now()
    this.runDue()
    await this.settle()
  }

  /** Drops every queued task (used by reset). */
  clear(): void {
    this.tasks = new TaskQueue()
  }

  /** Stops the real-time timer and waits for running work. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    this.tasks = new TaskQueue()
    await this.settle()
  }
}
