/**
 * Per-attempt timeouts on one shared timer (src/transport/timers.ts): each attempt times out when its
 * own timeout has passed, in deadline order whatever order they started in; an ended attempt never
 * times out (the shared timer holds the process only while an attempt waits:
 * attempt-timers-exit.heavy.test.ts); and a faked
 * `setTimeout` (fake timers installed after the timer was armed) still times attempts out.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { cancelTimeout, scheduleTimeout, type TimedAttempt } from "../../src/transport/timers"
import { makeTransports, type SendResult } from "../../src/transport/fetch"

const entry = (name: string, fired: Array<{ name: string; at: number }>, start: number): TimedAttempt => ({
  deadlineAt: 0,
  prevTimed: undefined,
  nextTimed: undefined,
  queued: false,
  timedOut: () => fired.push({ name, at: performance.now() - start })
})

afterEach(() => {
  vi.useRealTimers()
})

/**
 * The timers and `performance.now()` on vitest's fake clock, moved only by the test: each deadline
 * is checked at the exact millisecond it falls due, whatever the machine's load.
 */
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] })

describe("attempt timeouts on one shared timer", () => {
  it("each times out once its own timeout has passed, in deadline order, and a cancelled one never", async () => {
    fakeClock()
    const fired: Array<{ name: string; at: number }> = []
    const start = performance.now()
    const long = entry("long-120", fired, start)
    const short = entry("short-30", fired, start)
    const mid = entry("mid-60", fired, start)
    const cancelled = entry("cancelled-40", fired, start)
    scheduleTimeout(long, 120)
    scheduleTimeout(short, 30)
    scheduleTimeout(cancelled, 40)
    scheduleTimeout(mid, 60)
    cancelTimeout(cancelled)
    expect(cancelled.queued).toBe(false)
    await vi.advanceTimersByTimeAsync(119)
    expect(fired.map((f) => f.name)).toEqual(["short-30", "mid-60"])
    await vi.advanceTimersByTimeAsync(61)
    expect(fired.map((f) => f.name)).toEqual(["short-30", "mid-60", "long-120"])
    const ms = Object.fromEntries(fired.map((f) => [f.name, f.at]))
    expect(ms["short-30"]).toBe(30)
    expect(ms["mid-60"]).toBe(60)
    expect(ms["long-120"]).toBe(120)
    for (const e of [long, short, mid]) expect(e.queued).toBe(false)
  })

  it("an attempt scheduled from inside another's timeout is timed too", async () => {
    fakeClock()
    const fired: Array<{ name: string; at: number }> = []
    const start = performance.now()
    const second = entry("second", fired, start)
    const first: TimedAttempt = { ...entry("first", fired, start), timedOut: () => {
      fired.push({ name: "first", at: performance.now() - start })
      scheduleTimeout(second, 20)
    } }
    scheduleTimeout(first, 10)
    await vi.advanceTimersByTimeAsync(29)
    expect(fired.map((f) => f.name)).toEqual(["first"])
    await vi.advanceTimersByTimeAsync(1)
    expect(fired.map((f) => f.name)).toEqual(["first", "second"])
    expect(fired[1]!.at).toBe(30)
  })

  it("a hanging fetch under fake timers installed after the shared timer was armed times out when they pass its timeout", async () => {
    // Arm the shared timer with the real setTimeout first (a long-waiting attempt).
    const fired: Array<{ name: string; at: number }> = []
    const early = entry("early", fired, performance.now())
    scheduleTimeout(early, 3000)
    // Only the timer functions faked: `performance.now()` keeps real time, so the attempt's time is
    // up by the faked timer's clock alone.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    try {
      const { send } = makeTransports("http://gw.test", (_req, init) => new Promise((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))))
      let result: SendResult | undefined
      send({ operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs: 5000 }, (r) => (result = r))
      await vi.advanceTimersByTimeAsync(4000)
      expect(result).toBeUndefined()
      // The earlier deadline armed with the real timer is kept, on the faked one.
      expect(fired.map((f) => f.name)).toEqual(["early"])
      await vi.advanceTimersByTimeAsync(1500)
      expect(result).toMatchObject({ _tag: "Timeout", timeoutMs: 5000 })
    } finally {
      vi.useRealTimers()
      cancelTimeout(early)
    }
  })

  it("an attempt scheduled while timed-out attempts are handled does not delay an earlier one still waiting", async () => {
    fakeClock()
    const fired: Array<{ name: string; at: number }> = []
    const start = performance.now()
    const later = entry("later-1000", fired, start)
    const waiting = entry("waiting-40", fired, start)
    const first: TimedAttempt = { ...entry("first-10", fired, start), timedOut: () => {
      fired.push({ name: "first-10", at: performance.now() - start })
      scheduleTimeout(later, 1000)
    } }
    scheduleTimeout(first, 10)
    scheduleTimeout(waiting, 40)
    await vi.advanceTimersByTimeAsync(40)
    expect(fired.map((f) => ({ name: f.name, at: f.at }))).toEqual([{ name: "first-10", at: 10 }, { name: "waiting-40", at: 40 }])
    await vi.advanceTimersByTimeAsync(969)
    expect(fired).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(fired.map((f) => ({ name: f.name, at: f.at }))).toEqual([{ name: "first-10", at: 10 }, { name: "waiting-40", at: 40 }, { name: "later-1000", at: 1010 }])
  })
})
