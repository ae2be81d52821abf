import { it } from "@effect/vitest"
import { Effect, Exit, Fiber, TestClock } from "effect"
import { describe, expect } from "vitest"
import { makePayClient, resolveConfig, type PayClientOptions } from "../../src/index"
import { merchant } from "../support/fixtures"
import { http500, routedFetch, statusOk, type Script } from "../support/stub"

// Time-dependent behaviour on Effect's TestClock: nothing here waits for real minutes.
function service(status: Array<Script> | ((form: URLSearchParams, n: number) => Script), extra: Partial<PayClientOptions> = {}) {
  const stub = routedFetch({ status, capture: [http500(), { status: 200, body: { type: "async-response", status: "processing", "serial-number": "s", "paynet-order-id": "123", "merchant-order-id": "c-1" } }] })
  return { svc: makePayClient(resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch, retry: { maxRetries: 0, jitter: false }, ...extra })), stub }
}

// Lets the stub's promises settle, then moves the test clock; until the fiber is done.
const drive = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, stepMs: number, maxSteps = 10_000) =>
  Effect.gen(function*() {
    for (let i = 0; i < maxSteps; i++) {
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 0)))
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return done.value
      yield* TestClock.adjust(stepMs)
    }
    throw new Error("fiber did not finish")
  })

const q = { client_orderid: "c-1", orderid: "123" }

describe("awaitFinal says what happened to the money", () => {
  it.effect("voided, refunded, partly refunded and charged-back orders are reported as such, not approved", () =>
    Effect.gen(function*() {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ "transaction-type": "void", amount: "10.00" }, "voided"],
        [{ "transaction-type": "return", amount: "10.00", "returned-amount": "10.00" }, "refunded"],
        [{ "transaction-type": "return", amount: "10.00", "returned-amount": "4.00" }, "partially-refunded"],
        [{ "transaction-type": "return", amount: "10.00", "captured-amount": "6.00", "returned-amount": "6.00" }, "refunded"],
        [{ "transaction-type": "chargeback", amount: "10.00" }, "charged-back"],
        [{ "transaction-type": "sale", amount: "10.00", "returned-amount": "0.00" }, "approved"]
      ]
      for (const [extra, outcome] of cases) {
        const { svc } = service([statusOk("approved", extra)])
        const final = yield* svc.awaitFinal(q)
        expect(final, outcome).toMatchObject({ _tag: "Final", status: "approved", outcome })
      }
      const declined = yield* service([statusOk("declined", { "transaction-type": "sale" })]).svc.awaitFinal(q)
      expect(declined).toMatchObject({ outcome: "declined" })
    }))

  it.effect("a pending 3DS status carries html beside redirect-to into ActionRequired", () =>
    Effect.gen(function*() {
      const html = "<form action='https://acs.example/'></form>"
      const { svc } = service([statusOk("processing", { "redirect-to": "https://acs.example/", html })])
      expect(yield* svc.awaitFinal(q)).toMatchObject({ _tag: "ActionRequired", redirectTo: "https://acs.example/", html })
      expect(yield* svc.status(q)).toMatchObject({ html })
    }))

  it.effect("the gateway's `unknown` ends the wait after unknownGraceMs (5 min), not the 1 h deadline", () =>
    Effect.gen(function*() {
      const { svc, stub } = service([statusOk("unknown")])
      const fiber = yield* Effect.fork(Effect.flip(svc.awaitFinal(q)))
      const error = yield* drive(fiber, 4000)
      expect(Exit.isSuccess(error) && error.value).toMatchObject({ _tag: "AwaitFinalTimeout", reason: "unknown-status", lastStatus: "unknown", statusReached: true })
      const value = Exit.isSuccess(error) ? (error.value as { waitedMs: number; unknownForMs: number; message: string }) : undefined
      expect(value?.unknownForMs).toBe(value?.waitedMs)
      expect(value?.message).toContain("status unknown for")
      const waited = value?.waitedMs ?? -1
      expect(waited).toBeLessThanOrEqual(5 * 60_000)
      expect(waited).toBeGreaterThan(4 * 60_000)
      expect(stub.count("status")).toBeLessThan(100)
    }))

  // Spec D9u: unknown is not final, bounded, and not sticky.
  it.effect("an `unknown` followed by a final status is that final status", () =>
    Effect.gen(function*() {
      const { svc, stub } = service((_form, n) => (n < 3 ? statusOk("unknown") : statusOk("approved", { "transaction-type": "sale", amount: "10.00" })))
      const fiber = yield* Effect.fork(svc.awaitFinal(q))
      const final = yield* drive(fiber, 4000)
      expect(Exit.isSuccess(final) && final.value).toMatchObject({ _tag: "Final", status: "approved", outcome: "approved" })
      expect(stub.count("status")).toBe(4)
    }))

  it.effect("the grace counts `unknown` in a row: a `processing` between restarts it, and the deadline ends such a wait", () =>
    Effect.gen(function*() {
      // 50 unknown (200 s), 1 processing, 50 unknown, ...: never 5 minutes of unknown in a row.
      const { svc } = service((_form, n) => (n % 51 === 50 ? statusOk("processing") : statusOk("unknown")))
      const fiber = yield* Effect.fork(Effect.flip(svc.awaitFinal(q, { deadlineMs: 15 * 60_000, fastPhaseMs: 60 * 60_000 })))
      const error = yield* drive(fiber, 4000)
      expect(Exit.isSuccess(error) && error.value).toMatchObject({ _tag: "AwaitFinalTimeout", reason: "deadline", lastStatus: "unknown" })
      expect(Exit.isSuccess(error) ? (error.value as { waitedMs: number }).waitedMs : -1).toBeGreaterThan(14 * 60_000)
    }))

  it.effect("status never reached: AwaitFinalTimeout keeps the last error and says so", () =>
    Effect.gen(function*() {
      const { svc } = service([http500()])
      const fiber = yield* Effect.fork(Effect.flip(svc.awaitFinal(q, { deadlineMs: 60_000 })))
      const error = yield* drive(fiber, 4000)
      expect(Exit.isSuccess(error) && error.value).toMatchObject({
        _tag: "AwaitFinalTimeout",
        reason: "deadline",
        lastStatus: undefined,
        statusReached: false,
        lastError: { _tag: "GatewayServerError", httpStatus: 500 }
      })
    }))
})

describe("awaitFinal and a signal", () => {
  it.effect("an aborted signal stops the wait with Cancelled", () =>
    Effect.gen(function*() {
      const { svc } = service([statusOk("processing")])
      const controller = new AbortController()
      const fiber = yield* Effect.fork(Effect.flip(svc.awaitFinal(q, { signal: controller.signal })))
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
      controller.abort()
      const exit = yield* drive(fiber, 10)
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ _tag: "Cancelled", operation: "awaitFinal", reason: "signal" })
    }))
})

describe("reconciliation waits out the processing window on the test clock", () => {
  it.effect("a capture answered 500 is resent only after the order stayed unchanged for settleMs", () =>
    Effect.gen(function*() {
      const before = statusOk("approved", { amount: "10.00", "captured-amount": "0.00", "transaction-type": "preauth" })
      const { svc, stub } = service([before], { reconcile: { settleMs: 30_000, pollIntervalMs: 2_000 }, retry: { maxRetries: 1, baseDelayMs: 250, jitter: false } })
      const start = yield* TestClock.currentTimeMillis
      const fiber = yield* Effect.fork(svc.capture({ ...q, amount: "4.00", currency: "USD" }))
      const exit = yield* drive(fiber, 1000)
      const elapsed = (yield* TestClock.currentTimeMillis) - start
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({ type: "async-response" })
      expect(stub.count("capture")).toBe(2)
      expect(elapsed).toBeGreaterThanOrEqual(30_000)
      // One read before sending, then a poll every 2 s over the 30 s window.
      expect(stub.count("status")).toBeGreaterThanOrEqual(15)
    }))

  it.effect("the call's deadline ends an unproven wait in OutcomeUnknown(mayHaveApplied), never a bare error", () =>
    Effect.gen(function*() {
      const before = statusOk("approved", { amount: "10.00", "captured-amount": "0.00", "transaction-type": "preauth" })
      const { svc, stub } = service([before], { reconcile: { settleMs: 30_000, pollIntervalMs: 2_000 } })
      const fiber = yield* Effect.fork(Effect.flip(svc.capture({ ...q, amount: "4.00", currency: "USD" }, { deadlineMs: 10_000 })))
      const exit = yield* drive(fiber, 1000)
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
        _tag: "OutcomeUnknown",
        mayHaveApplied: true,
        lastError: "GatewayServerError",
        statusBefore: { "captured-amount": "0.00" },
        statusAfter: { "captured-amount": "0.00" }
      })
      expect(stub.count("capture")).toBe(1)
    }))
})
