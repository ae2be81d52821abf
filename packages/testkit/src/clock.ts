/**
 * The simulator clock and its scheduler. Everything time-based (finalisation, settlement, callback
 * retries, recurring charges) is a task on this clock, so tests control time exactly with `advance`
 * instead of sleeping.
 *
 * @packageDocumentation
 */

/** A task that falls due at `at` (epoch ms on the simulator clock). */
interface Task {
  readonly at: number
  readonly seq: number
  /** The work; absent: the clock's {@link SimClock.runner} does the job record (no closure per task). */
  readonly run: (() => void | Promise<void>) | undefined
  /** The JSON-safe description of the work (what a snapshot keeps instead of the closure). */
  readonly job: unknown
}

/** A clock with a time-ordered task queue. */
export class SimClock {
  private offset = 0
  private readonly base: number
  private readonly real: boolean
  private tasks = new TaskHeap()
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
    // A binary heap: thousands of pending settlements must not make each insert O(n).
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
      while (this.tasks.size > 0 && this.tasks.peek()!.at <= now) this.start(this.tasks.pop()!)
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
    this.tasks = new TaskHeap()
  }

  /** Stops the real-time timer and waits for running work. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    this.tasks = new TaskHeap()
    await this.settle()
  }
}

function before(a: Task, b: Task): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq)
}

/** A min-heap of tasks by (time, queue order). */
class TaskHeap {
  private readonly items: Task[] = []

  get size(): number {
    return this.items.length
  }

  /** A sorted copy (time, queue order); the heap itself is untouched. */
  sorted(): Task[] {
    return [...this.items].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
  }

  forEach(f: (task: Task) => void): void {
    for (const task of this.items) f(task)
  }

  /** Keeps only the tasks `keep` accepts; a sorted array is a valid heap. */
  keep(keep: (task: Task) => boolean): void {
    const kept = this.items.filter(keep)
    if (kept.length === this.items.length) return
    kept.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
    this.items.length = 0
    for (const task of kept) this.items.push(task)
  }

  peek(): Task | undefined {
    return this.items[0]
  }

  push(task: Task): void {
    const items = this.items
    let i = items.push(task) - 1
    while (i > 0) {
      const parent = (i - 1) >>> 1
      if (!before(task, items[parent]!)) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = task
  }

  pop(): Task | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let i = 0
    const n = items.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && before(items[right]!, items[left]!) ? right : left
      if (!before(items[child]!, last)) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }
}
