/**
 * The one attempt (src/call/attempt.ts): start → sign → send → classify, as plain functions over a
 * client's call context. Each step is driven alone here; the pipeline's suites drive them together.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import { attemptEffect, newAttempts, runAttempt, startAttempt, type AttemptOutcome, type Attempts } from "../../src/call/attempt"
import { makeCallContext, type CallContext } from "../../src/call/context"
import { prepareKeys } from "../../src/call/sign"
import { resolveConfig, type PayClientOptions } from "../../src/config"
import { memoryIntentLedger } from "../../src/intents/ledger"
import { preparedOperations } from "../../src/operations/table"
import { makeTransports } from "../../src/transport/fetch"
import { merchant, saleInput } from "../support/fixtures"
import { asyncOk, http500, stubFetch, type Script } from "../support/stub"

const contextOf = (fetch: (req: Request) => Promise<Response>, extra: Partial<PayClientOptions> = {}): CallContext => {
  const config = resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch, timeoutMs: 500, ...extra })
  const status = () => () => Effect.die("no status lookups in these tests")
  return makeCallContext(config, prepareKeys(config), makeTransports(config.baseUrl, config.fetch).send, memoryIntentLedger(), status)
}

const sale = preparedOperations.SALE
const values = (): Record<string, string> => ({ login: merchant.login, ...saleInput() })

const attemptsOf = (ctx: CallContext, options: { signal?: AbortSignal; deadlineMs?: number } = {}, key?: string): Attempts =>
  newAttempts(ctx, sale, values(), "1001", options, false, 1_000, key)

const outcomeOf = (ctx: CallContext, a: Attempts, now = 1_000): Promise<AttemptOutcome> =>
  new Promise((resolve) => void runAttempt(ctx, a, now, resolve))

describe("newAttempts", () => {
  it("takes the call's timeout and deadline over the client's, from `now`", () => {
    const ctx = contextOf(stubFetch([]).fetch, { deadlineMs: 9_000 })
    const a = newAttempts(ctx, sale, values(), "1001", { timeoutMs: 123 }, false, 1_000, "k-1")
    expect(a).toMatchObject({ timeoutMs: 123, deadlineAt: 10_000, key: "k-1", count: 0 })
    // A money call aborts its fetch through its own interruption handler.
    expect(a.inFlight).toEqual({ abort: undefined })
    expect(newAttempts(ctx, preparedOperations.STATUS, {}, "1001", {}, false, 0, undefined).inFlight).toBeUndefined()
  })
})

describe("startAttempt", () => {
  it("counts and signs the attempt: a control for a control-signed operation, bounded by the deadline", () => {
    const ctx = contextOf(stubFetch([]).fetch)
    const a = attemptsOf(ctx, { deadlineMs: 200 })
    const request = startAttempt(ctx, a, 1_050)
    expect(a.count).toBe(1)
    expect(request).toMatchObject({ operation: "sale", path: sale.path, endpointId: "1001", timeoutMs: 150 })
    expect((request as { control?: string }).control).toMatch(/^[0-9a-f]{40}$/)
    expect((request as { authorization?: string }).authorization).toBeUndefined()
  })

  it("ends before sending, uncounted, once the caller's signal fired or the deadline passed", () => {
    const ctx = contextOf(stubFetch([]).fetch)
    const controller = new AbortController()
    controller.abort()
    const aborted = attemptsOf(ctx, { signal: controller.signal })
    expect(startAttempt(ctx, aborted, 1_000)).toMatchObject({ _tag: "Cancelled", reason: "signal" })
    const late = attemptsOf(ctx, { deadlineMs: 10 })
    expect(startAttempt(ctx, late, 1_010)).toMatchObject({ _tag: "Cancelled", reason: "deadline" })
    expect([aborted.count, late.count]).toEqual([0, 0])
  })

  it("tracks a money call's fetch under its key until the fetch itself returns", async () => {
    const ctx = contextOf(stubFetch([]).fetch)
    const request = startAttempt(ctx, attemptsOf(ctx, {}, "k-track"), 1_000) as { onFetch?: () => () => void }
    const returned = request.onFetch!()
    // While the fetch is out and the deadline has passed, the processing window never closes.
    expect(await Effect.runPromise(ctx.fetches.ended("k-track", undefined, 0, 5))).toBe(Number.POSITIVE_INFINITY)
    returned()
    expect(await Effect.runPromise(ctx.fetches.ended("k-track", undefined, 0, 5))).toBe(5)
  })
})

describe("runAttempt", () => {
  it("sends once and classifies the reply: the typed reply, ids as strings", async () => {
    const stub = stubFetch([asyncOk()])
    const ctx = contextOf(stub.fetch)
    const outcome = await outcomeOf(ctx, attemptsOf(ctx))
    expect(Either.isRight(outcome) && outcome.right).toMatchObject({ type: "async-response", "paynet-order-id": "123" })
    expect(stub.sent).toHaveLength(1)
    expect(stub.sent[0]!.form.get("control")).toMatch(/^[0-9a-f]{40}$/)
  })

  it("ends in the typed error of a refused or failed send, never a thrown one", async () => {
    const failing: Array<Script> = [http500(), { reject: new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } }) }]
    const ctx = contextOf(stubFetch(failing).fetch)
    expect(await outcomeOf(ctx, attemptsOf(ctx))).toMatchObject({ left: { _tag: "GatewayServerError", httpStatus: 500 } })
    expect(await outcomeOf(ctx, attemptsOf(ctx))).toMatchObject({ left: { _tag: "TransportError", code: "ECONNREFUSED", mayHaveReachedGateway: false } })
  })

  it("reports a failure before sending at once, with nothing sent", async () => {
    const stub = stubFetch([])
    const ctx = contextOf(stub.fetch)
    const outcome = await outcomeOf(ctx, attemptsOf(ctx, { deadlineMs: 1 }), 1_001)
    expect(outcome).toMatchObject({ left: { _tag: "Cancelled" } })
    expect(stub.sent).toHaveLength(0)
  })
})

describe("attemptEffect", () => {
  it("is the same attempt as one Effect step", async () => {
    const ctx = contextOf(stubFetch([asyncOk()]).fetch)
    const a = newAttempts(ctx, sale, values(), "1001", {}, false, Date.now(), undefined)
    const reply = await Effect.runPromise(attemptEffect(ctx, a))
    expect(reply).toMatchObject({ type: "async-response", status: "processing" })
  })

  it("aborts a read's fetch when its fiber is interrupted", async () => {
    let aborted = false
    const hang = (_req: Request, init?: { signal?: AbortSignal }) =>
      new Promise<Response>((_, reject) => {
        const signal = init?.signal ?? _req.signal
        signal.addEventListener("abort", () => {
          aborted = true
          reject(new DOMException("aborted", "AbortError"))
        })
      })
    const ctx = contextOf(hang)
    const a = newAttempts(ctx, preparedOperations.STATUS, { login: merchant.login, client_orderid: "c-1" }, "1001", {}, false, Date.now(), undefined)
    const fiber = Effect.runFork(attemptEffect(ctx, a))
    await new Promise((resolve) => setTimeout(resolve, 10))
    const exit = await Effect.runPromise(Fiber.interrupt(fiber))
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(aborted).toBe(true)
  })
})
