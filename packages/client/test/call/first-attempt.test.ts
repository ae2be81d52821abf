/**
 * The fiber-free first attempt (src/call/pipeline.ts: firstPromise, firstEffect) and its hand-over to the Effect pipeline.
 * Both the Promise facade and the Effect service (no tracer installed) take it. Every test here
 * fails if the hand-over re-sent the first attempt, started the call afresh, or dropped its intent:
 * send counts are exact, a restarted call would see a different scripted answer, and a dropped or
 * doubled intent makes the same key join a call that never ends instead of replaying.
 */
import { Deferred, Effect, Exit, Tracer } from "effect"
import fc from "fast-check"
import { beforeEach, describe, expect, it } from "vitest"
import { preparedOperations } from "../../src/operations/table"
import { fingerprintOf, memoryIntentLedger } from "../../src/intents/ledger"
import { createPayClient, makePayClient, resolveConfig, runToPromise, type PayClientOptions } from "../../src/index"
import { merchant, saleInput } from "../support/fixtures"
import { asyncOk, http500, notFound, reset, routedFetch, statusOk, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const retry = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4, jitter: true }
const base = (fetch: (req: Request) => Promise<Response>, extra: Partial<PayClientOptions> = {}): PayClientOptions => ({
  baseUrl: "http://gw.test", ...merchant, fetch, retry, reconcile: { settleMs: 30, pollIntervalMs: 5 }, timeoutMs: 500, ...extra
})

/** The same calls through the Promise facade and through the Effect service (native tracer). */
const apis = [
  ["Promise facade", (options: PayClientOptions) => {
    const pay = createPayClient(options)
    return { sale: (i: ReturnType<typeof saleInput>, o?: { idempotencyKey?: string }) => pay.sale(i, o), status: (q: { client_orderid: string }) => pay.status(q) }
  }],
  ["Effect service", (options: PayClientOptions) => {
    const svc = makePayClient(resolveConfig(options))
    return {
      sale: (i: ReturnType<typeof saleInput>, o?: { idempotencyKey?: string }) => runToPromise(svc.sale(i, o)),
      status: (q: { client_orderid: string }) => runToPromise(svc.status(q))
    }
  }]
] as const

const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a rejection") }, (e: unknown) => e as { _tag: string } & Record<string, unknown>)
const saleStatus = (extra: Record<string, unknown> = {}) => statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale", ...extra })

describe.each(apis)("first attempt handed over to the pipeline (%s)", (_name, make) => {
  it("a reset after the gateway processed the sale reconciles with one send; the key then replays", async () => {
    const stub = routedFetch({ sale: [reset(), asyncOk()], status: [saleStatus()] })
    const pay = make(base(stub.fetch))
    const input = saleInput()
    const result = await pay.sale(input)
    expect(result).toMatchObject({ type: "reconciled", reason: "TransportError", status: "approved" })
    expect(stub.count("sale")).toBe(1)
    expect(stub.count("status")).toBe(1)
    // The intent the first attempt began is the one the pipeline finished: its key replays.
    expect(await pay.sale(input, { idempotencyKey: result.idempotencyKey })).toEqual(result)
    expect(stub.count("sale")).toBe(1)
  })

  it("a 500 on the first send is proven not applied, then sent again: one lookup between two sends", async () => {
    const stub = routedFetch({ sale: [http500(), asyncOk()], status: [notFound()] })
    const pay = make(base(stub.fetch))
    const result = await pay.sale(saleInput(), { idempotencyKey: "first-500" })
    expect(result).toMatchObject({ type: "async-response", idempotencyKey: "first-500" })
    expect(stub.count("sale")).toBe(2)
    expect(stub.count("status")).toBe(1)
  })

  it("an undecodable 200 on a sale reconciles (DecodeError), never resends", async () => {
    const stub = routedFetch({ sale: [{ status: 200, body: "<html>proxy page</html>" }, asyncOk()], status: [saleStatus()] })
    const pay = make(base(stub.fetch))
    expect(await pay.sale(saleInput())).toMatchObject({ type: "reconciled", reason: "DecodeError" })
    expect(stub.count("sale")).toBe(1)
  })

  it("a first attempt that times out aborts its fetch and reconciles once that fetch returned", async () => {
    const signals: Array<AbortSignal> = []
    const hang: Script = (req) => new Promise((_, reject) => {
      signals.push(req.signal)
      req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
    })
    const stub = routedFetch({ sale: [hang, asyncOk()], status: [saleStatus()] })
    const pay = make(base(stub.fetch, { timeoutMs: 40 }))
    expect(await pay.sale(saleInput())).toMatchObject({ type: "reconciled", reason: "Timeout" })
    expect(signals).toHaveLength(1)
    expect(signals[0]!.aborted).toBe(true)
    expect(stub.count("sale")).toBe(1)
  })

  it("a read retries after a first-attempt 500 with the attempt counted: maxRetries 1 means two sends", async () => {
    const stub = routedFetch({ status: [http500(), http500(), statusOk()] })
    const pay = make(base(stub.fetch, { retry: { ...retry, maxRetries: 1 } }))
    // A restarted call would get a third send and succeed; the handed-over one has used its retry.
    expect(await rejection(pay.status({ client_orderid: "c-1" }))).toMatchObject({ _tag: "GatewayServerError", httpStatus: 500 })
    expect(stub.count("status")).toBe(2)
  })

  it("identical keyless sales at once share one send (the second joins the first's intent)", async () => {
    const slow: Script = () => new Promise((r) => setTimeout(() => r(new Response(JSON.stringify(asyncOk().body), { status: 200 })), 30))
    const stub = routedFetch({ sale: [slow] })
    const pay = make(base(stub.fetch))
    const input = saleInput()
    const [a, b] = await Promise.all([pay.sale(input), pay.sale(input)])
    expect(b).toEqual(a)
    expect(stub.count("sale")).toBe(1)
  })

  it("a refusal on the first send is the answer, and the key is forgotten: the same key sends again", async () => {
    const refused = { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": "Card declined", "error-code": "card-declined" } }
    const stub = routedFetch({ sale: [refused, asyncOk()] })
    const pay = make(base(stub.fetch))
    const input = saleInput()
    expect(await rejection(pay.sale(input, { idempotencyKey: "refused-1" }))).toMatchObject({ _tag: "GatewayValidationError", idempotencyKey: "refused-1" })
    expect(await pay.sale(input, { idempotencyKey: "refused-1" })).toMatchObject({ type: "async-response", idempotencyKey: "refused-1" })
    expect(stub.count("sale")).toBe(2)
  })
})

describe("with a tracer installed the full pipeline runs", () => {
  it("a call has its span with attempt and outcome; without one, the call opens none", async () => {
    const native = Effect.runSync(Effect.tracer)
    const spans: Array<Tracer.Span> = []
    const recording = Tracer.make({
      span: (...args) => {
        const span = native.span(...args)
        spans.push(span)
        return span
      },
      context: native.context
    })
    const stub = routedFetch({ sale: [asyncOk()] })
    const svc = makePayClient(resolveConfig(base(stub.fetch)))
    await Effect.runPromise(svc.sale(saleInput()).pipe(Effect.withTracer(recording)))
    const call = spans.find((s) => s.name === "paykit.sale")
    expect(call?.attributes.get("attempt")).toBe(1)
    expect(call?.attributes.get("outcome")).toBe("ok")
    const before = spans.length
    await Effect.runPromise(svc.sale(saleInput()))
    expect(spans.length).toBe(before)
  })
})

describe("in-memory ledger", () => {
  it("a Deferred made after the call ended is already complete; one made while running completes at finish", async () => {
    const ledger = memoryIntentLedger().sync!
    const fresh = ledger.begin("k-1", "fp-1")
    if (fresh._tag !== "Fresh") throw new Error("expected Fresh")
    const joined = ledger.begin("k-1", "fp-1")
    if (joined._tag !== "Join") throw new Error("expected Join")
    const waiting = Effect.runPromise(Deferred.await(joined.intent.done))
    ledger.finish(fresh.intent, Exit.succeed("ok"), false)
    expect(await waiting).toBe("ok")
    const other = ledger.begin("k-2", "fp-2")
    if (other._tag !== "Fresh") throw new Error("expected Fresh")
    ledger.finish(other.intent, Exit.succeed("late"), false)
    expect(await Effect.runPromise(Deferred.await(other.intent.done))).toBe("late")
  })

  it("keeps at most maxDone succeeded keys, dropping the oldest first", () => {
    const ledger = memoryIntentLedger(2).sync!
    for (const k of ["a", "b", "c"]) {
      const b = ledger.begin(k, `fp-${k}`)
      if (b._tag !== "Fresh") throw new Error("expected Fresh")
      ledger.finish(b.intent, Exit.succeed(k), false)
    }
    expect(ledger.begin("a", "fp-a")._tag).toBe("Fresh")
    expect(ledger.begin("b", "fp-b")._tag).toBe("Replay")
    expect(ledger.begin("c", "fp-c")._tag).toBe("Replay")
  })

  it("a succeeded key replays its own copy of the result, refuses another request and still reports its call as ended", async () => {
    const ledger = memoryIntentLedger()
    const sync = ledger.sync!
    const meta = { operation: "CAPTURE", method: "capture", client_orderid: "c-1", orderid: "o-1", endpoint: "1001" }
    const fresh = sync.begin("k-1", "fp-1", meta)
    if (fresh._tag !== "Fresh") throw new Error("expected Fresh")
    const result = { type: "async-response", "serial-number": "sn-1" }
    sync.finish(fresh.intent, Exit.succeed(result), false)
    // The caller's later edits of its own object never reach what the key replays.
    result.type = "edited"
    for (let i = 0; i < 2; i++) {
      const replay = sync.begin("k-1", "fp-1")
      if (replay._tag !== "Replay" || !Exit.isSuccess(replay.exit)) throw new Error("expected a successful Replay")
      expect(replay.exit.value).toEqual({ type: "async-response", "serial-number": "sn-1" })
    }
    expect(sync.begin("k-1", "fp-other")._tag).toBe("KeyReused")
    // Keyless, the identical request is a new call once the first one succeeded.
    expect(sync.begin(undefined, "fp-1")._tag).toBe("Fresh")
    expect(await Effect.runPromise(ledger.callsOn({ client_orderid: "c-1", orderid: "o-1" }))).toEqual([
      { operation: "CAPTURE", serialNumber: "sn-1", running: false }
    ])
  })

  it("the fingerprint over an operation's sorted field names equals the one over the request's sorted keys", () => {
    const op = preparedOperations.SALE
    const names = op.fieldNames
    fc.assert(
      fc.property(fc.subarray([...names]), fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9]{1,6}$/), (present, value, endpoint) => {
        // Keys in a random order, as a caller's object may have them.
        const values = Object.fromEntries([...present].reverse().map((k, i) => [k, `${value}${i}`]))
        expect(fingerprintOf("SALE", endpoint, values, names)).toBe(fingerprintOf("SALE", endpoint, values))
      }),
      { numRuns: 300 }
    )
  })
})
