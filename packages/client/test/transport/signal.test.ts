/**
 * An attempt's own abort as a plain signal (src/transport/signal.ts): where the platform's `Request`
 * links it, aborting it aborts that attempt's `Request` exactly as an `AbortController` would; where
 * it does not (another `Request`), the transport falls back to an `AbortController`. Either way a
 * timed-out or interrupted attempt aborts its fetch, so a held fetch returns and the key's
 * processing window can close.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { AttemptSignal, linksPlainSignals } from "../../src/transport/signal"
import { makeTransports, type SendResult } from "../../src/transport/fetch"
import { createPayClient, type PayClientOptions } from "../../src/index"
import { merchant, saleInput } from "../support/fixtures"
import { asyncOk, routedFetch, signalled, statusOk } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const retry = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4, jitter: true }
const base = (fetch: (req: Request) => Promise<Response>, extra: Partial<PayClientOptions> = {}): PayClientOptions => ({
  baseUrl: "http://gw.test", ...merchant, fetch, retry, reconcile: { settleMs: 30, pollIntervalMs: 5 }, timeoutMs: 500, ...extra
})
const saleStatus = () => statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale" })

/** A fetch that holds every request until its signal aborts, recording each request's signal. */
const holding = () => {
  const signals: Array<AbortSignal> = []
  const hang = (req: Request): Promise<Response> => new Promise((_, reject) => {
    signals.push(req.signal)
    req.signal.addEventListener("abort", () => reject(req.signal.reason))
  })
  return { signals, hang }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe("AttemptSignal", () => {
  it("this platform's Request links it: the request is aborted with an AbortError when it is", () => {
    expect(linksPlainSignals(Request)).toBe(true)
    const signal = new AttemptSignal()
    const request = new Request("http://gw.test/x", { method: "POST", body: "a=1", signal: signal as unknown as AbortSignal })
    expect(request.signal.aborted).toBe(false)
    signal.abort()
    expect(request.signal.aborted).toBe(true)
    expect((request.signal.reason as DOMException).name).toBe("AbortError")
    expect(signal.reason).toBeInstanceOf(DOMException)
  })

  it("calls each listener once, with the signal as `this`, and not after it was removed", () => {
    const signal = new AttemptSignal()
    const calls: Array<string> = []
    const a = function(this: unknown) {
      calls.push(this === signal ? "a" : "a-wrong-this")
    }
    const b = () => calls.push("b")
    const c = () => calls.push("c")
    signal.addEventListener("abort", a)
    signal.addEventListener("abort", a)
    signal.addEventListener("abort", b)
    signal.addEventListener("abort", c)
    signal.addEventListener("other", c)
    signal.removeEventListener("abort", b)
    expect(signal.listeners("abort")).toEqual([a, c])
    signal.abort()
    signal.abort()
    expect(calls).toEqual(["a", "c"])
    expect(signal.aborted).toBe(true)
    expect(() => signal.throwIfAborted()).toThrow(DOMException)
    expect(signal.listeners("abort")).toEqual([])
  })

  it("a Request that rejects it, or takes it without linking, is probed as not linking", () => {
    class StrictRequest extends Request {
      constructor(input: string, init?: RequestInit) {
        if (init?.signal != null && !(init.signal instanceof AbortSignal)) throw new TypeError("signal is not an AbortSignal")
        super(input, init)
      }
    }
    class IgnoringRequest extends Request {
      constructor(input: string, init?: RequestInit) {
        super(input, { ...init, signal: null })
      }
    }
    expect(linksPlainSignals(StrictRequest as typeof Request)).toBe(false)
    expect(linksPlainSignals(IgnoringRequest as typeof Request)).toBe(false)
    expect(linksPlainSignals(Request)).toBe(true)
  })
})

describe("an attempt's abort reaches its fetch", () => {
  it("a timed-out attempt aborts its own request only; the next attempt's request is not aborted", async () => {
    const { signals, hang } = holding()
    // The attempt's signal comes beside the request; linked into it here, as the stubs do.
    const { send } = makeTransports("http://gw.test", (req, init) => hang(signalled(req, init)))
    const request = { operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs: 20 }
    const first = await new Promise<SendResult>((resolve) => send(request, resolve))
    expect(first).toMatchObject({ _tag: "Timeout", timeoutMs: 20 })
    let second: SendResult | undefined
    const interrupt = send({ ...request, timeoutMs: 10_000 }, (r) => (second = r))
    expect(signals).toHaveLength(2)
    expect(signals[0]!.aborted).toBe(true)
    expect(signals[1]!.aborted).toBe(false)
    interrupt()
    expect(signals[1]!.aborted).toBe(true)
    expect(second).toBeUndefined()
  })

  it("with a Request that does not link a plain signal, a timed-out sale still aborts its fetch and reconciles", async () => {
    class StrictRequest extends Request {
      constructor(input: string | Request, init?: RequestInit) {
        if (init?.signal != null && !(init.signal instanceof AbortSignal)) throw new TypeError("signal is not an AbortSignal")
        super(input, init)
      }
    }
    vi.stubGlobal("Request", StrictRequest)
    const { signals, hang } = holding()
    const stub = routedFetch({ sale: [hang, asyncOk()], status: [saleStatus()] })
    const pay = createPayClient(base(stub.fetch, { timeoutMs: 40 }))
    expect(await pay.sale(saleInput())).toMatchObject({ type: "reconciled", reason: "Timeout" })
    expect(signals).toHaveLength(1)
    expect(signals[0]!.aborted).toBe(true)
    expect(stub.count("sale")).toBe(1)
  })

  it("the caller's signal aborts the attempt's fetch (plain signal path)", async () => {
    const { signals, hang } = holding()
    const stub = routedFetch({ sale: [hang], status: [saleStatus()] })
    const pay = createPayClient(base(stub.fetch))
    const caller = new AbortController()
    const call = pay.sale(saleInput(), { signal: caller.signal }).then((r) => ({ ok: r }), (e: unknown) => ({ error: e }))
    await vi.waitFor(() => expect(signals).toHaveLength(1))
    caller.abort()
    await call
    expect(signals[0]!.aborted).toBe(true)
    expect(stub.count("sale")).toBe(1)
  })
})
