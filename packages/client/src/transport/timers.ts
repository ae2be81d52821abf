/**
 * Per-attempt timeouts on one shared timer. A `setTimeout` per attempt, cleared when the reply
 * comes, makes Node create and drop its timer list for that duration and re-arm libuv's timer on
 * every call (~3 µs of CPU per call with one call in flight). Instead the attempts wait in one list
 * ordered by deadline, and one timer is armed for the first of them; an attempt that ends leaves
 * the list (no timer call), and the timer, armed for an earlier deadline, re-arms itself for the
 * next one when it fires. Each attempt times out when its own `timeoutMs` has passed.
 *
 * The shared timer keeps the process alive only while some attempt waits (it is unref'd when the
 * list empties). Deadlines are on `performance.now()`; the timer firing for a deadline counts as
 * that deadline having passed, so a faked `setTimeout` (a test's fake timers) times attempts out,
 * and a `setTimeout` replaced after the timer was armed is used from the next attempt on.
 *
 * @packageDocumentation
 */

/** What waits for its deadline: the transport's attempt in flight. */
export interface TimedAttempt {
  /** When it times out (`performance.now()` ms); set by {@link scheduleTimeout}. */
  deadlineAt: number
  prevTimed: TimedAttempt | undefined
  nextTimed: TimedAttempt | undefined
  /** Whether it is in the list. */
  queued: boolean
  timedOut(): void
}

let head: TimedAttempt | undefined
let tail: TimedAttempt | undefined
let timer: ReturnType<typeof setTimeout> | undefined
// The deadline the timer is armed for, and the `setTimeout`/`clearTimeout` that armed it.
let armedFor = 0
let armedWith: typeof setTimeout | undefined
let clearWith: typeof clearTimeout | undefined
let refed = false

const now = (): number => performance.now()

// Node's timers can stop holding the process; elsewhere (a number from `setTimeout`) nothing to do.
function hold(on: boolean): void {
  const t = timer as { ref?: () => unknown; unref?: () => unknown } | undefined
  if (typeof t === "object" && t !== null) (on ? t.ref : t.unref)?.call(t)
  refed = on
}

function arm(at: number, from: number): void {
  if (timer !== undefined) clearWith!(timer)
  armedWith = setTimeout
  clearWith = clearTimeout
  armedFor = at
  // Node's timers have a 1 ms floor and fire no earlier than asked; a fraction is rounded up.
  timer = setTimeout(fire, Math.max(1, Math.ceil(at - from)))
  refed = true
}

function fire(): void {
  timer = undefined
  // Every deadline up to the one the timer was armed for has passed by the timer's own clock, and
  // every one up to now by ours.
  const passed = Math.max(armedFor, now())
  for (let first = head; first !== undefined && first.deadlineAt <= passed; first = head) {
    unlink(first)
    first.timedOut()
  }
  if (head !== undefined && timer === undefined) arm(head.deadlineAt, passed)
}

function unlink(entry: TimedAttempt): void {
  if (entry.prevTimed === undefined) head = entry.nextTimed
  else entry.prevTimed.nextTimed = entry.nextTimed
  if (entry.nextTimed === undefined) tail = entry.prevTimed
  else entry.nextTimed.prevTimed = entry.prevTimed
  entry.prevTimed = undefined
  entry.nextTimed = undefined
  entry.queued = false
}

/** Calls `entry.timedOut()` once `ms` have passed, unless {@link cancelTimeout} is called first. */
export function scheduleTimeout(entry: TimedAttempt, ms: number): void {
  const start = now()
  entry.deadlineAt = start + ms
  entry.queued = true
  // Almost always the latest deadline (same timeout, later start): appended; else placed in order.
  let before = tail
  while (before !== undefined && before.deadlineAt > entry.deadlineAt) before = before.prevTimed
  entry.prevTimed = before
  entry.nextTimed = before === undefined ? head : before.nextTimed
  if (entry.prevTimed === undefined) head = entry
  else entry.prevTimed.nextTimed = entry
  if (entry.nextTimed === undefined) tail = entry
  else entry.nextTimed.prevTimed = entry
  // Armed for the first deadline in the list (this entry's, or an earlier one's while `fire` runs
  // the timed-out attempts' callbacks), with the `setTimeout` in place now.
  if (timer === undefined || armedFor > entry.deadlineAt || armedWith !== setTimeout) arm(head!.deadlineAt, start)
  else if (!refed) hold(true)
}

/** Takes `entry` out of the list; the shared timer no longer holds the process once none waits. */
export function cancelTimeout(entry: TimedAttempt): void {
  if (!entry.queued) return
  unlink(entry)
  if (head === undefined && timer !== undefined && refed) hold(false)
}
