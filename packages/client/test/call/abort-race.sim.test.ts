/**
 * A send the client stopped waiting for (its signal fired, or the attempt timed out) may still be on
 * its way: the fetch keeps going until the gateway answers. Seen in the fault matrix on a loaded
 * machine (return × interrupt × again/same-key: money moved 2 times): the aborted return was still
 * held by the in-process gateway when the merchant's next call, finding the order unchanged for the
 * processing window counted from the abort, sent the return again; then the first one landed too.
 *
 * Here the gateway holds the first request until the test lets it go, and the client runs on Effect's
 * TestClock, so the processing window passes at a chosen point: no timing, no luck.
 */
import { it } from "@effect/vitest"
import type { OperationId } from "@paykit/contracts"
import { createSimulator, type Simulator } from "@paykit/testkit"
import { Effect, Fiber, TestClock } from "effect"
import { describe, expect } from "vitest"
import { createPayClient, makePayClient, resolveConfig, type CallOptions, type PayClientOptions } from "../../src/index"
import { countMoved, matrixOps, pathOf, type Prepared } from "../support/matrix-ops"
import { BASE_URL, clientOptions } from "../support/sim"

const returnOp = matrixOps.find((o) => o.method === "return")!
const SETTLE_MS = 250
const POLL_MS = 10

/** A fetch that holds the first request of one operation, as a gateway holds one the client gave up on. */
function holdingFetch(sim: Simulator, id: OperationId) {
  const prefix = pathOf(id)
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  let arrived!: () => void
  const firstArrived = new Promise<void>((r) => (arrived = r))
  let firstLanded: Promise<Response> | undefined
  let sends = 0
  const fetch = async (req: Request): Promise<Response> => {
    if (!new URL(req.url).pathname.startsWith(prefix)) return sim.fetch(req)
    if (++sends > 1) {
      // Sent again while the first is still held: both land, as they would at a real gateway.
      const again = await sim.fetch(req)
      release()
      await firstLanded
      return again
    }
    arrived()
    // Whatever became of the client's signal, the held request is processed once released.
    firstLanded = released.then(() => sim.fetch(req))
    return firstLanded
  }
  return { fetch, release: () => release(), firstArrived, sends: () => sends, firstLanded: () => firstLanded }
}

interface Case {
  readonly sim: Simulator
  readonly p: Prepared
  readonly held: ReturnType<typeof holdingFetch>
  readonly svc: ReturnType<typeof makePayClient>
}

const setup = (extra: Partial<PayClientOptions> = {}) =>
  Effect.promise(async (): Promise<Case> => {
    const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })
    const p = await returnOp.prepare(createPayClient(clientOptions(sim)))
    const held = holdingFetch(sim, returnOp.id)
    const svc = makePayClient(resolveConfig(clientOptions(sim, {
      fetch: held.fetch,
      // The per-attempt timer is real time: far away unless a case wants a timeout.
      timeoutMs: 60_000,
      deadlineMs: 60_000,
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 4, jitter: false },
      reconcile: { settleMs: SETTLE_MS, pollIntervalMs: POLL_MS },
      ...extra
    })))
    return { sim, p, held, svc }
  })

const callReturn = (c: Case, options: CallOptions = {}) =>
  Effect.either((c.svc as unknown as Record<string, (i: unknown, o: CallOptions) => Effect.Effect<Record<string, unknown>, Record<string, unknown>>>)["return"]!(c.p.input, options))

/** Lets real promises run, then moves the test clock one poll interval. */
const step = Effect.zipRight(Effect.promise(() => new Promise((r) => setTimeout(r, 0))), TestClock.adjust(POLL_MS))

/** Steps the test clock well past the processing window (or until the client sends again). */
const pastTheWindow = (c: Case) =>
  Effect.gen(function*() {
    for (let i = 0; i < (SETTLE_MS / POLL_MS) * 4 && c.held.sends() < 2; i++) yield* step
  })

const finish = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2_000; i++) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return yield* done.value
      yield* step
    }
    throw new Error("the call did not finish")
  })

/** The ledger's word: how often the return moved money, and the order's figures. */
const ledger = (c: Case) =>
  Effect.promise(async () => {
    await c.held.firstLanded()
    const order = c.sim.order(c.p.orderid!)
    return { moved: countMoved(c.sim, returnOp, c.p).count, returned: order?.returned, invariants: c.sim.checkInvariants(), sends: c.held.sends() }
  })

const close = (c: Case) => Effect.promise(() => c.sim.close())

describe("an abort or timeout after the fetch started: the next send waits for that fetch", () => {
  for (const reaction of ["again", "same-key"] as const) {
    it.effect(`abort while the gateway holds the return, then the same call ${reaction === "again" ? "again (no key)" : "with the same key"}: refunded once`, () =>
      Effect.gen(function*() {
        const c = yield* setup()
        const controller = new AbortController()
        const first = yield* Effect.fork(callReturn(c, { signal: controller.signal }))
        yield* Effect.promise(() => c.held.firstArrived)
        controller.abort()
        const firstAnswer = yield* finish(first)
        expect(firstAnswer._tag === "Left" && firstAnswer.left).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
        const key = firstAnswer._tag === "Left" ? firstAnswer.left["idempotencyKey"] as string : ""

        const second = yield* Effect.fork(callReturn(c, reaction === "same-key" ? { idempotencyKey: key } : {}))
        yield* pastTheWindow(c)
        // Only now does the gateway process the held request.
        c.held.release()
        const secondAnswer = yield* finish(second)
        const after = yield* ledger(c)
        yield* close(c)

        expect(after.sends).toBe(1)
        expect(after.moved).toBe(1)
        expect(after.returned).toBe("4.00")
        expect(after.invariants).toEqual([])
        expect(secondAnswer._tag === "Right" && secondAnswer.right).toMatchObject({ type: "reconciled", idempotencyKey: key })
      }))
  }

  it.effect("a per-attempt timeout while the gateway holds the return: reconciled, never sent twice", () =>
    Effect.gen(function*() {
      const c = yield* setup({ timeoutMs: 1 })
      const call = yield* Effect.fork(callReturn(c))
      yield* Effect.promise(() => c.held.firstArrived)
      yield* pastTheWindow(c)
      c.held.release()
      const answer = yield* finish(call)
      const after = yield* ledger(c)
      yield* close(c)

      expect(after.sends).toBe(1)
      expect(after.moved).toBe(1)
      expect(after.returned).toBe("4.00")
      expect(answer._tag === "Right" && answer.right).toMatchObject({ type: "reconciled", reason: "Timeout" })
    }))

  it.effect("the merchant's signal ends a wait for a held fetch in OutcomeUnknown, and nothing is sent", () =>
    Effect.gen(function*() {
      const c = yield* setup()
      const controller = new AbortController()
      const first = yield* Effect.fork(callReturn(c, { signal: controller.signal }))
      yield* Effect.promise(() => c.held.firstArrived)
      controller.abort()
      yield* finish(first)
      const again = new AbortController()
      const second = yield* Effect.fork(callReturn(c, { signal: again.signal }))
      yield* pastTheWindow(c)
      again.abort()
      const answer = yield* finish(second)
      c.held.release()
      const after = yield* ledger(c)
      yield* close(c)

      expect(answer._tag === "Left" && answer.left).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
      expect(after.sends).toBe(1)
      expect(after.moved).toBe(1)
    }))

  it.effect("an abort before the fetch starts sends nothing: Cancelled, and the same key then sends once", () =>
    Effect.gen(function*() {
      const c = yield* setup()
      const controller = new AbortController()
      controller.abort()
      const first = yield* callReturn(c, { signal: controller.signal })
      expect(first._tag === "Left" && first.left).toMatchObject({ _tag: "Cancelled", reason: "signal" })
      expect(c.held.sends()).toBe(0)
      const key = first._tag === "Left" ? first.left["idempotencyKey"] as string : ""
      const second = yield* Effect.fork(callReturn(c, { idempotencyKey: key }))
      yield* Effect.promise(() => c.held.firstArrived)
      c.held.release()
      const answer = yield* finish(second)
      const after = yield* ledger(c)
      yield* close(c)

      expect(answer._tag === "Right" && answer.right).toMatchObject({ type: "async-response", idempotencyKey: key })
      expect(after.moved).toBe(1)
      expect(after.sends).toBe(1)
    }))

  it.effect("a sale aborted while the gateway holds it is never answered 'not applied', however long the order stays unseen", () =>
    Effect.gen(function*() {
      const saleOp = matrixOps.find((o) => o.method === "sale")!
      const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })
      const p = yield* Effect.promise(() => saleOp.prepare(createPayClient(clientOptions(sim))))
      const held = holdingFetch(sim, saleOp.id)
      // The status lookup after the abort is slow: the processing window passes while it is out (an
      // event loop stalled under load does the same).
      let releaseStatus!: () => void
      const statusGate = new Promise<void>((r) => (releaseStatus = r))
      const fetch = async (req: Request): Promise<Response> => {
        if (new URL(req.url).pathname.startsWith(pathOf("STATUS"))) await statusGate
        return held.fetch(req)
      }
      const svc = makePayClient(resolveConfig(clientOptions(sim, {
        fetch, timeoutMs: 60_000, deadlineMs: 60_000,
        retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 4, jitter: false },
        reconcile: { settleMs: SETTLE_MS, pollIntervalMs: POLL_MS }
      })))
      const controller = new AbortController()
      const call = (svc as unknown as Record<string, (i: unknown, o: CallOptions) => Effect.Effect<Record<string, unknown>, Record<string, unknown>>>)["sale"]!
      const first = yield* Effect.fork(Effect.either(call(p.input, { signal: controller.signal })))
      yield* Effect.promise(() => held.firstArrived)
      controller.abort()
      // The test clock runs far past the processing window while the gateway still holds the sale.
      for (let i = 0; i < (SETTLE_MS / POLL_MS) * 4; i++) yield* step
      releaseStatus()
      const answer = yield* finish(first)
      held.release()
      yield* Effect.promise(async () => { await held.firstLanded() })
      const orders = countMoved(sim, saleOp, p)
      yield* Effect.promise(() => sim.close())

      expect(answer._tag === "Left" && answer.left).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
      expect(orders.count).toBe(1)
      expect(held.sends()).toBe(1)
    }))

})
