import { beforeEach, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { createPayClient, isPayClientError, makePayClient, resolveConfig, type PayClientOptions } from "../../src/index"
import { merchant, saleInput } from "../support/fixtures"
import { asyncOk, http500, notFound, reset, routedFetch, statusOk, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const fast = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4, jitter: true }

function client(routes: Parameters<typeof routedFetch>[0], extra: Partial<PayClientOptions> = {}) {
  const stub = routedFetch(routes)
  const pay = createPayClient({
    baseUrl: "http://gw.test", ...merchant, endpointGroupId: 2001, fetch: stub.fetch, retry: fast,
    reconcile: { settleMs: 30, pollIntervalMs: 5 }, timeoutMs: 200, ...extra
  })
  return { pay, stub }
}

const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a rejection") }, (e: unknown) => e as { _tag: string } & Record<string, unknown>)
const later = (ms: number, script: Script): Script => () => new Promise((r) => setTimeout(() => r(new Response(JSON.stringify((script as { body: unknown }).body), { status: (script as { status: number }).status })), ms))
const preauthStatus = (captured: string, extra: Record<string, unknown> = {}) =>
  statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": captured === "0.00" ? "preauth" : "capture", "captured-amount": captured, ...extra })
const capture = { client_orderid: "c-1", orderid: "123", amount: "4.00", currency: "USD" }

describe("merchant retries as replays", () => {
  it("the same idempotencyKey replays the first outcome without sending", async () => {
    const { pay, stub } = client({ status: [preauthStatus("0.00")], capture: [asyncOk()] })
    const first = await pay.capture(capture, { idempotencyKey: "cap-1" })
    const again = await pay.capture(capture, { idempotencyKey: "cap-1" })
    expect(first).toMatchObject({ type: "async-response", idempotencyKey: "cap-1" })
    expect(again).toEqual(first)
    expect(stub.count("capture")).toBe(1)
    // A generated key is returned on the result; reusing it replays too.
    const other = await pay.capture({ ...capture, amount: "1.00" })
    expect(other.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    expect(await pay.capture({ ...capture, amount: "1.00" }, { idempotencyKey: other.idempotencyKey })).toEqual(other)
    expect(stub.count("capture")).toBe(2)
  })

  it("concurrent identical calls (a double click) share one send; a key in flight is joined", async () => {
    const { pay, stub } = client({ status: [preauthStatus("0.00")], capture: [later(30, asyncOk())] })
    const [a, b] = await Promise.all([pay.capture(capture), pay.capture(capture)])
    expect(stub.count("capture")).toBe(1)
    expect(b).toEqual(a)
    const [c, d] = await Promise.all([pay.capture({ ...capture, amount: "2.00" }, { idempotencyKey: "k" }), pay.capture({ ...capture, amount: "2.00" }, { idempotencyKey: "k" })])
    expect(stub.count("capture")).toBe(2)
    expect(d).toEqual(c)
  })

  it("a key reused for a different request is an InputError naming idempotencyKey, nothing sent", async () => {
    const { pay, stub } = client({ status: [preauthStatus("0.00")], capture: [asyncOk()] })
    await pay.capture(capture, { idempotencyKey: "k" })
    expect(await rejection(pay.capture({ ...capture, amount: "5.00" }, { idempotencyKey: "k" }))).toMatchObject({ _tag: "InputError", field: "idempotencyKey", idempotencyKey: "k" })
    expect(stub.count("capture")).toBe(1)
  })

  it("after OutcomeUnknown, the same call (with or without the key) reconciles first and never applies twice", async () => {
    let gatewayDown = true
    let captured = "0.00"
    const { pay, stub } = client({
      status: (_f, n) => n === 0 ? preauthStatus("0.00") : gatewayDown ? http500() : preauthStatus(captured),
      capture: () => {
        captured = "4.00" // processed; the reply is lost
        return reset()
      }
    }, { deadlineMs: 100 })
    const e = await rejection(pay.capture(capture))
    expect(e).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true, statusBefore: { "captured-amount": "0.00" } })
    expect(String(e["next"])).toContain("idempotencyKey")
    gatewayDown = false
    const keyed = await pay.capture(capture, { idempotencyKey: e["idempotencyKey"] as string })
    expect(keyed).toMatchObject({ type: "reconciled", idempotencyKey: e["idempotencyKey"], statusReply: { "captured-amount": "4.00" } })
    expect(stub.count("capture")).toBe(1)
  })

  it("a keyless blind retry after OutcomeUnknown resumes the unknown call instead of sending a second capture", async () => {
    let statusUp = false
    const { pay, stub } = client({
      status: (_f, n) => n === 0 ? preauthStatus("0.00") : statusUp ? preauthStatus("4.00") : http500(),
      capture: [reset()]
    }, { deadlineMs: 100 })
    expect(await rejection(pay.capture(capture))).toMatchObject({ _tag: "OutcomeUnknown" })
    statusUp = true
    expect(await pay.capture(capture)).toMatchObject({ type: "reconciled" })
    expect(stub.count("capture")).toBe(1)
  })
})

describe("reconciliation checks what it found", () => {
  it("a 99.00 sale answered 500 whose client_orderid names a 10.00 order is a conflict naming the amount", async () => {
    const { pay, stub } = client({ sale: [http500()], status: [statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale" })] })
    const e = await rejection(pay.sale(saleInput({ amount: "99.00" })))
    expect(e).toMatchObject({ _tag: "ReconcileConflict", field: "amount", expected: "99.00", found: "10.00" })
    expect(stub.count("sale")).toBe(1)
    const cur = client({ sale: [http500()], status: [statusOk("approved", { amount: "10.00", currency: "EUR", "transaction-type": "sale" })] })
    expect(await rejection(cur.pay.sale(saleInput()))).toMatchObject({ _tag: "ReconcileConflict", field: "currency" })
    const type = client({ sale: [http500()], status: [statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "preauth" })] })
    expect(await rejection(type.pay.sale(saleInput()))).toMatchObject({ _tag: "ReconcileConflict", field: "transaction-type" })
  })

  it("a capture whose figure moved by another amount is a conflict, not a success", async () => {
    const { pay } = client({ status: (_f, n) => preauthStatus(n === 0 ? "0.00" : "6.00"), capture: [http500()] })
    expect(await rejection(pay.capture(capture))).toMatchObject({ _tag: "ReconcileConflict", field: "amount", expected: "4.00", found: "6.00" })
  })

  it("per-call options reach the reconciling status: endpoint group and timeout", async () => {
    const { pay, stub } = client({ sale: [reset()], status: [statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale" })] })
    expect(await pay.sale(saleInput(), { endpoint: "group" })).toMatchObject({ type: "reconciled" })
    expect(stub.sent.map((s) => new URL(s.url).pathname)).toEqual(["/api/v2/sale/2001", "/api/v2/status/2001"])
  })
})

describe("every reply classified", () => {
  it("408, 429 and an undecodable 200 on a money-moving call are reconciled; on a read 429/503 are retried", async () => {
    for (const reply of [{ status: 408, body: "" }, { status: 429, body: "slow down" }, { status: 502, body: "<html>" }, { status: 200, body: "not json" }, { status: 200, body: { type: "async-response" } }]) {
      const { pay } = client({ sale: [reply], status: [statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale" })] })
      expect(await pay.sale(saleInput()), JSON.stringify(reply)).toMatchObject({ type: "reconciled" })
    }
    const read = client({ status: [{ status: 429, body: "" }, { status: 503, body: "" }, statusOk()] })
    expect(await read.pay.status({ client_orderid: "c-1" })).toMatchObject({ status: "approved" })
  })

  it("401 and 403 are AuthenticationError", async () => {
    for (const status of [401, 403]) {
      const { pay } = client({ status: [{ status, body: "" }], "payout": [{ status, body: { type: "validation-error", "serial-number": "s", "error-message": "OAuth signature refused", "error-code": "oauth-signature" } }] })
      expect(await rejection(pay.status({ client_orderid: "c" }))).toMatchObject({ _tag: "AuthenticationError", errorCode: `http-${status}` })
      const e = await rejection(pay.payout({ client_orderid: "c", amount: "1.00", currency: "USD", credit_card_number: "4111111111111111" }))
      expect(e).toMatchObject({ _tag: "AuthenticationError", errorCode: "oauth-signature" })
      expect(isPayClientError(e)).toBe(true)
    }
    expect(isPayClientError(new Error("x"))).toBe(false)
  })
})

describe("cancellation and deadlines", () => {
  it("a signal aborted before sending cancels with nothing sent", async () => {
    const { pay, stub } = client({ sale: [asyncOk()] })
    const e = await rejection(pay.sale(saleInput(), { signal: AbortSignal.abort() }))
    expect(e).toMatchObject({ _tag: "Cancelled", reason: "signal" })
    expect(typeof e["idempotencyKey"]).toBe("string")
    expect(stub.count("sale")).toBe(0)
  })

  it("an abort after the bytes left ends in reconciliation: proven or OutcomeUnknown, never a silent abort or a resend", async () => {
    let controller = new AbortController()
    let landed = 0
    // The gateway holds the request; the merchant aborts once it has arrived.
    const hang: Script = (req) => new Promise((_, reject) => {
      landed++
      req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
      setTimeout(() => controller.abort(), 5)
    })
    const found = client({ sale: [hang], status: [statusOk("processing", { amount: "10.00", currency: "USD", "transaction-type": "sale" })] })
    expect(await found.pay.sale(saleInput(), { signal: controller.signal })).toMatchObject({ type: "reconciled", reason: "TransportError" })
    controller = new AbortController()
    // A settle window far beyond the test: the abort, not an order that stayed unchanged for the
    // whole processing time, is what ends this call (on a loaded machine 30 ms pass before the
    // first status answer, and that alone would prove "not applied").
    const missing = client({ sale: [hang], status: [notFound()] }, { reconcile: { settleMs: 60_000, pollIntervalMs: 5 } })
    expect(await rejection(missing.pay.sale(saleInput(), { signal: controller.signal }))).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: true })
    expect(missing.stub.count("sale")).toBe(1)
    expect(landed).toBe(2)
  })

  it("deadlineMs bounds the whole call, retries included, and ends in OutcomeUnknown once a send was unknown", async () => {
    const { pay, stub } = client({ sale: [http500()], status: [notFound()] }, { retry: { maxRetries: 50, baseDelayMs: 10, maxDelayMs: 10, jitter: false } })
    const started = Date.now()
    const e = await rejection(pay.sale(saleInput(), { deadlineMs: 120 }))
    expect(Date.now() - started).toBeLessThan(1500)
    expect(e).toMatchObject({ _tag: "OutcomeUnknown" })
    expect(stub.count("sale")).toBeLessThan(50)
  })

  it("an Effect interrupted after sending (Effect.timeout around the call) leaves the key unknown: the retry reconciles, never resends", async () => {
    let captured = "0.00"
    const stub = routedFetch({
      status: () => preauthStatus(captured),
      capture: [(req) => new Promise<Response>((_, reject) => {
        captured = "4.00" // the gateway processes it; the merchant's Effect gives up first
        req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
      })]
    })
    const svc = makePayClient(resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch, retry: fast, reconcile: { settleMs: 30, pollIntervalMs: 5 } }))
    const timedOut = await Effect.runPromise(Effect.flip(svc.capture(capture, { idempotencyKey: "int-1" }).pipe(Effect.timeout("30 millis"))))
    expect(timedOut._tag).toBe("TimeoutException")
    const again = await Effect.runPromise(svc.capture(capture, { idempotencyKey: "int-1" }))
    expect(again).toMatchObject({ type: "reconciled", idempotencyKey: "int-1", statusReply: { "captured-amount": "4.00" } })
    expect(stub.count("capture")).toBe(1)
  })
})
