/**
 * The simulator clock's task queue: tasks come out by (time, queue order), whatever order they went
 * in. Most tasks arrive in streams that are already in that order: every sale's finalisation falls
 * due a fixed processing delay after it, every approved charge's settlement a fixed settlement delay
 * after that. One binary heap of all of them made each finalisation cost two walks of ~18 levels
 * through a heap holding a day's pending settlements (its push climbing above them all, its pop
 * sifting the last settlement back down to the bottom). So a task that comes after the last one
 * of a {@link Lane} is appended to it (O(1) in, O(1) out) and only the others go to the heap; the
 * next task is the earliest of the heap's top and the lanes' heads, so the order is exactly the
 * heap's.
 *
 * @packageDocumentation
 */

/** A task that falls due at `at` (epoch ms on the simulator clock). */
export interface Task {
  readonly at: number
  readonly seq: number
  /** The work; absent: the clock's runner does the job record (no closure per task). */
  readonly run: (() => void | Promise<void>) | undefined
  /** The JSON-safe description of the work (what a snapshot keeps instead of the closure). */
  readonly job: unknown
}

/** Whether `a` runs before `b`: earlier, or at the same time and queued first. */
export function before(a: Task, b: Task): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq)
}

function byRunOrder(a: Task, b: Task): number {
  return before(a, b) ? -1 : before(b, a) ? 1 : 0
}

/** How many lanes: a sale's finalisation, the slow card's, settlement, and one more stream. */
const LANES = 4

/**
 * Tasks in run order, first out first: a task joins only behind one that runs before it. Taken
 * from the front by an index; the array is cut once half of it is taken.
 */
class Lane {
  private items: Array<Task | undefined> = []
  private head = 0

  get size(): number {
    return this.items.length - this.head
  }

  /** The next task of this lane, if any. */
  first(): Task | undefined {
    return this.items[this.head]
  }

  /** The task this lane ends with, if any. */
  last(): Task | undefined {
    return this.head < this.items.length ? this.items[this.items.length - 1] : undefined
  }

  append(task: Task): void {
    this.items.push(task)
  }

  shift(): void {
    this.items[this.head++] = undefined
    if (this.head === this.items.length) {
      this.items = []
      this.head = 0
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
  }

  forEach(f: (task: Task) => void): void {
    for (let i = this.head; i < this.items.length; i++) f(this.items[i]!)
  }
}

/** Tasks by (time, queue order): lanes for the streams that come in order, a heap for the rest. */
export class TaskQueue {
  private readonly heap = new TaskHeap()
  private lanes: Lane[] = Array.from({ length: LANES }, () => new Lane())

  get size(): number {
    let size = this.heap.size
    for (const lane of this.lanes) size += lane.size
    return size
  }

  /**
   * Queues a task: behind the lane whose last task is the latest of those that run before it (so
   * each stream keeps to its own lane), else in an empty lane, else in the heap.
   */
  push(task: Task): void {
    let best: Lane | undefined
    let bestLast: Task | undefined
    let empty: Lane | undefined
    for (const lane of this.lanes) {
      const last = lane.last()
      if (last === undefined) empty ??= lane
      else if (before(last, task) && (bestLast === undefined || before(bestLast, last))) {
        best = lane
        bestLast = last
      }
    }
    const lane = best ?? empty
    if (lane === undefined) this.heap.push(task)
    else lane.append(task)
  }

  /** The task that runs next, if any. */
  peek(): Task | undefined {
    let next = this.heap.peek()
    for (const lane of this.lanes) {
      const first = lane.first()
      if (first !== undefined && (next === undefined || before(first, next))) next = first
    }
    return next
  }

  /** Takes the task that runs next, if any. */
  pop(): Task | undefined {
    let next = this.heap.peek()
    let from: Lane | undefined
    for (const lane of this.lanes) {
      const first = lane.first()
      if (first !== undefined && (next === undefined || before(first, next))) {
        next = first
        from = lane
      }
    }
    if (from === undefined) return this.heap.pop()
    from.shift()
    return next
  }

  /** A sorted copy (time, queue order); the queue itself is untouched. */
  sorted(): Task[] {
    const all: Task[] = []
    this.forEach((task) => all.push(task))
    return all.sort(byRunOrder)
  }

  /** Calls `f` with every task, in no particular order. */
  forEach(f: (task: Task) => void): void {
    this.heap.forEach(f)
    for (const lane of this.lanes) lane.forEach(f)
  }

  /** Keeps only the tasks `keep` accepts (then all in the heap, sorted: a valid heap). */
  keep(keep: (task: Task) => boolean): void {
    const kept: Task[] = []
    let dropped = false
    this.forEach((task) => {
      if (keep(task)) kept.push(task)
      else dropped = true
    })
    if (!dropped) return
    this.heap.replace(kept.sort(byRunOrder))
    this.lanes = Array.from({ length: LANES }, () => new Lane())
  }
}

/** A min-heap of tasks by (time, queue order). */
class TaskHeap {
  private items: Task[] = []

  get size(): number {
    return this.items.length
  }

  forEach(f: (task: Task) => void): void {
    for (const task of this.items) f(task)
  }

  /** Holds exactly `sorted` (a sorted array is a valid heap). */
  replace(sorted: Task[]): void {
    this.items = sorted
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
