/**
 * A controlled clock for tests that are about time (deadlines, leases, timeouts, a slow gateway):
 * vitest's fake timers stand in for `setTimeout`, `setInterval`, `setImmediate` and `Date`, so the
 * client's attempt timers, Effect's default `Clock` (`Date.now`, `setTimeout`), the memory store's
 * leases and the simulator's latency faults all read one clock that moves only when the test moves
 * it. A test then measures "took" in that clock's milliseconds: the same figure on any machine,
 * however loaded (docs/testing.md).
 *
 * Microtasks and `process.nextTick` stay real, so Promises and the in-process simulator run as
 * usual between two steps of the clock.
 */
import { afterEach, vi } from "vitest"

/** Epoch ms the fake clock starts at (a fixed date, so a test reads the same times on every run). */
export const TEST_EPOCH = Date.UTC(2026, 0, 1)

/** Installs fake timers for the current test file (each test starts at {@link TEST_EPOCH}). */
export function useTestTime(): void {
  afterEach(() => {
    vi.useRealTimers()
  })
}

/** Starts the controlled clock for one test. */
export function startTestTime(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date"], now: TEST_EPOCH })
}

/** Moves the clock by `ms`, running every timer that falls due and the microtasks between them. */
export async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms)
}

/** A `sleep` on the controlled clock: resolves once the test has moved the clock `ms` further. */
export const testSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Moves the clock in steps of `stepMs` until `promise` settles, at most `limitMs`; answers how far
 * the clock moved (`tookMs`, in the controlled clock's milliseconds) and the outcome. A promise
 * still pending at `limitMs` is a failed expectation of the caller (`settled: false`).
 */
export async function runClock<T>(promise: Promise<T>, limitMs: number, stepMs = 1): Promise<
  { settled: true; tookMs: number; result: { ok: true; value: T } | { ok: false; error: unknown } } | { settled: false; tookMs: number }
> {
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined
  promise.then((value) => { outcome = { ok: true, value } }, (error: unknown) => { outcome = { ok: false, error } })
  const start = Date.now()
  // Microtasks first: a promise that settles without the clock moving took 0 ms.
  await vi.advanceTimersByTimeAsync(0)
  while (outcome === undefined && Date.now() - start < limitMs) await vi.advanceTimersByTimeAsync(stepMs)
  const tookMs = Date.now() - start
  return outcome === undefined ? { settled: false, tookMs } : { settled: true, tookMs, result: outcome }
}

/** An `AbortSignal` that aborts after `ms` on the controlled clock (`AbortSignal.timeout` runs on a real timer). */
export function testTimeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController()
  setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), ms)
  return controller.signal
}

/**
 * Moves the clock until `promise` settles (at most `limitMs`, default one simulated minute) and
 * answers its value, or throws its error; a promise still pending by then fails the test.
 */
export async function settledOnClock<T>(promise: Promise<T>, limitMs = 60_000): Promise<T> {
  const run = await runClock(promise, limitMs)
  if (!run.settled) throw new Error(`still pending after ${limitMs} ms on the test clock`)
  if (!run.result.ok) throw run.result.error
  return run.result.value
}
