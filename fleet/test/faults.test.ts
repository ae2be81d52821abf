import { describe, expect, it } from "vitest"
import { ALL_FAULTS, DEFAULT_FAULTS, NO_FAULTS, notFoundBound, settleFor } from "../src/faults"
import { SETTINGS, SIM_CLOCK_MAX_RATE } from "../src/settings"

describe("the workers' windows follow the faults (docs/fleet.md#a-gateway-that-forgets-orders)", () => {
  it("settleMs outlasts every late send: a request sent just before the deadline and held lands within settleMs of it", () => {
    for (const f of [NO_FAULTS, DEFAULT_FAULTS, ALL_FAULTS, { ...ALL_FAULTS, lateSendMs: 20_000 }]) {
      const settle = settleFor(f, SETTINGS.timeoutMs)
      expect(settle).toBeGreaterThanOrEqual(SETTINGS.timeoutMs)
      if (f.lateSends > 0) expect(settle).toBeGreaterThan(f.lateSendMs)
    }
    expect(settleFor({ ...ALL_FAULTS, lateSends: 0 }, SETTINGS.timeoutMs)).toBe(SETTINGS.timeoutMs)
  })

  it("order-not-found proves nothing once the simulator may have forgotten the order, in real time", () => {
    // By count it may forget an order at once; by age it keeps one retentionMs of real time at least.
    expect(notFoundBound({ ...NO_FAULTS, retention: 5 })).toBe(0)
    expect(notFoundBound(NO_FAULTS)).toBeUndefined()
    const bound = notFoundBound(DEFAULT_FAULTS)!
    expect(bound).toBeGreaterThan(0)
    expect(bound).toBeLessThan(DEFAULT_FAULTS.retentionMs!)
    expect(SIM_CLOCK_MAX_RATE).toBe(1 + SETTINGS.clockStepMs / SETTINGS.clockEveryMs)
  })
})
