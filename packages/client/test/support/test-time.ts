/**
 * A controlled clock for tests that are about time (deadlines, leases, timeouts, a slow gateway,
 * backoff): vitest's fake timers stand in for `setTimeout`, `setInterval`, `setImmediate`, `Date`
 * and `performance.now()`, so the client's attempt timers, Effect's default `Clock` (`Date.now`,
 * `setTimeout`), the memory store's leases and the simulator's latency faults all read one clock,
 * and a scheduler moves that clock to the next timer only when nothing else can run (every
 * microtask done, the event loop otherwise idle). Work takes no time on this clock; waiting takes exactly the time waited. So a
 * test reads the same times on any machine, however loaded (docs/testing.md).
 *
 * For in-memory worlds only (the in-process simulator, the memory store): a test that waits on real
 * I/O (a socket, a database server) must not use it, since the clock would run ahead of the I/O.
 */
import { afterEach, vi } from "vitest"

/** The real `setImmediate`, taken before any test fakes it: the scheduler's own turn. */
const realSetImmediate = globalThis.setImmediate

// Where the controlled clock ended in the file's last test: the next test starts after it, so state
// a file's tests share (a store, its leases and times) never sees time run backwards.
let lastEnd = 0
let running = false

/**
 * Starts the controlled clock for the current test (stopped after it by {@link useTestTime}'s
 * `afterEach`), at the real time or just after where the previous test's clock ended, whichever is
 * later. From here on, `setTimeout` & co. are fake and fire as the scheduler reaches them.
 */
export function startTestTime(): void {
  vi.useFakeTimers({
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date", "performance"],
    now: Math.max(Date.now(), lastEnd + 1)
  })
  running = true
  const turn = () => {
    if (!running) return
    // This runs as a macrotask: every microtask queued before it has run, so whatever is still
    // pending waits on a timer. Fire the next one (the clock jumps to it), then look again.
    if (vi.getTimerCount() > 0) vi.advanceTimersToNextTimer()
    realSetImmediate(turn)
  }
  realSetImmediate(turn)
}

/** Registers the `afterEach` that stops the controlled clock; call it once in a file or `describe`. */
export function useTestTime(): void {
  afterEach(() => {
    if (!running) return
    running = false
    lastEnd = Date.now()
    vi.useRealTimers()
  })
}

/** A `sleep` on whichever clock is in place (the controlled one, once started). */
export const testSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** An `AbortSignal` that aborts after `ms` on the controlled clock (`AbortSignal.timeout` runs on a real timer). */
export function testTimeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController()
  setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), ms)
  return controller.signal
}

/** Runs `promise` to its end and answers how long it took on the controlled clock, with its outcome. */
export async function timed<T>(promise: Promise<T>): Promise<{ tookMs: number; value: T }> {
  const start = Date.now()
  const value = await promise
  return { tookMs: Date.now() - start, value }
}
