import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { createPayClient, PayClient, payClientConfigFromEnv, type PayClientOptions } from "../../src/index"
import { Chunk, Duration, Schedule } from "effect"
import { retrySchedule } from "../../src/call/retry"
import { coid, merchant, saleInput } from "../support/fixtures"
import { asyncOk, http500, notFound, refused, reset, statusOk, stubFetch, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const fast = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4, jitter: true }

function client(scripts: Array<Script>, extra: Partial<PayClientOptions> = {}) {
  const stub = stubFetch(scripts)
  const pay = createPayClient({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch, retry: fast, reconcile: { settleMs: 20, pollIntervalMs: 5 }, ...extra })
  return { pay, sent: stub.sent }
}

const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a rejection") }, (e: unknown) => e as { _tag: string } & Record<string, unknown>)

describe("request pipeline", () => {
  it("signs, sends a form body with the vnd.pay+json Accept header and normalises numeric ids", async () => {
    const { pay, sent } = client([asyncOk()])
    const reply = await pay.sale(saleInput())
    expect(reply).toMatchObject({ type: "async-response", "paynet-order-id": "123" })
    expect(sent).toHaveLength(1)
    expect(sent[0]!.url).toBe("http://gw.test/api/v2/sale/1001")
    expect(sent[0]!.headers.get("accept")).toBe("application/vnd.pay+json")
    expect(sent[0]!.headers.get("content-type")).toBe("application/x-www-form-urlencoded")
    expect(sent[0]!.form.get("control")).toMatch(/^[0-9a-f]{40}$/)
  })

  it("fills login from config and lets the caller override it", async () => {
    const { pay, sent } = client([statusOk(), statusOk()])
    await pay.status({ client_orderid: "c-1" })
    await pay.status({ client_orderid: "c-1", login: "other" })
    expect(sent[0]!.form.get("login")).toBe("paykit-test")
    expect(sent[1]!.form.get("login")).toBe("other")
  })

  it("InputError names the field and rule, never the value, and sends nothing", async () => {
    const { pay, sent } = client([])
    const e = await rejection(pay.sale(saleInput({ credit_card_number: "41111111111111112222" })))
    expect(e._tag).toBe("InputError")
    expect(e["field"]).toBe("credit_card_number")
    expect(String(e)).not.toContain("41111111111111112222")
    const missing = await rejection(pay.capture({ client_orderid: "x" } as never))
    expect(missing).toMatchObject({ _tag: "InputError", field: "orderid" })
    const excess = await rejection(pay.status({ client_orderid: "x", bogus: "1" } as never))
    expect(excess).toMatchObject({ _tag: "InputError", field: "bogus" })
    const amount = await rejection(pay.sale(saleInput({ amount: "10.001" })))
    expect(amount).toMatchObject({ _tag: "InputError", field: "amount" })
    expect(sent).toHaveLength(0)
  })

  it("maps 400 replies by error-code category", async () => {
    const { pay } = client([
      { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": "Only an approved preauth", "error-code": "capture-not-allowed" } },
      { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": "bad control", "error-code": "control-mismatch" } },
      { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": "Luhn", "error-code": 7 } }
    ])
    const q = { client_orderid: "c", orderid: "1" }
    expect(await rejection(pay.capture(q))).toMatchObject({ _tag: "GatewayValidationError", errorCode: "capture-not-allowed", category: "lifecycle" })
    expect(await rejection(pay.capture(q))).toMatchObject({ _tag: "AuthenticationError", errorCode: "control-mismatch" })
    expect(await rejection(pay.capture(q))).toMatchObject({ _tag: "GatewayValidationError", errorCode: "7" })
  })

  it("DecodeError for a reply that breaks the spec", async () => {
    const { pay } = client([{ status: 200, body: { type: "async-response" } }, { status: 200, body: "<html>" }, { status: 302, body: {} }])
    expect(await rejection(pay.status({ client_orderid: "c" }))).toMatchObject({ _tag: "DecodeError", httpStatus: 200 })
    expect(await rejection(pay.status({ client_orderid: "c" }))).toMatchObject({ _tag: "DecodeError" })
    expect(await rejection(pay.status({ client_orderid: "c" }))).toMatchObject({ _tag: "DecodeError", httpStatus: 302 })
  })

  it("reads retry on transport errors, timeouts and 500s", async () => {
    const { pay, sent } = client([reset(), http500(), { hang: true }, statusOk()], { timeoutMs: 30 })
    expect(await pay.status({ client_orderid: "c" })).toMatchObject({ status: "approved" })
    expect(sent).toHaveLength(4)
  })

  it("reads give up after maxRetries with the last error", async () => {
    const { pay, sent } = client([http500(), http500(), http500(), http500()])
    expect(await rejection(pay.getCardInfo({ cardrefid: "ref-1" }))).toMatchObject({ _tag: "GatewayServerError", httpStatus: 500 })
    expect(sent).toHaveLength(4)
    const once = client([reset()])
    expect(await rejection(once.pay.status({ client_orderid: "c" }, { retry: { maxRetries: 0 } }))).toMatchObject({
      _tag: "TransportError",
      code: "ECONNRESET",
      mayHaveReachedGateway: true
    })
  })

  it("Timeout carries the per-attempt limit", async () => {
    const { pay } = client([{ hang: true }])
    expect(await rejection(pay.status({ client_orderid: "c" }, { timeoutMs: 10, retry: { maxRetries: 0 } }))).toMatchObject({ _tag: "Timeout", timeoutMs: 10 })
  })

  it("the retry schedule grows exponentially up to the cap, jittered within it", async () => {
    const delays = (jitter: boolean) =>
      Effect.runPromise(Schedule.run(Schedule.delays(retrySchedule({ maxRetries: 7, baseDelayMs: 250, maxDelayMs: 5000, jitter })), 0, [1, 2, 3, 4, 5, 6, 7]))
        .then((c) => Chunk.toArray(c).map(Duration.toMillis))
    expect(await delays(false)).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000])
    const jittered = await delays(true)
    expect(jittered).toHaveLength(7)
    jittered.forEach((d, i) => expect(d).toBeLessThanOrEqual([250, 500, 1000, 2000, 4000, 5000, 5000][i]!))
  })
})

describe("reconciliation of money-moving calls", () => {
  it("reset after sending → asks status, gateway knows the order → Reconciled, no resend", async () => {
    const { pay, sent } = client([reset(), statusOk("approved")])
    const input = saleInput()
    const r = await pay.sale(input)
    expect(r).toMatchObject({ type: "reconciled", status: "approved", reason: "TransportError", "paynet-order-id": "123" })
    expect(sent.map((s) => new URL(s.url).pathname)).toEqual(["/api/v2/sale/1001", "/api/v2/status/1001"])
    expect(sent[1]!.form.get("client_orderid")).toBe(input.client_orderid)
  })

  it("500 → status says order-not-found → resends with the same client_orderid", async () => {
    const { pay, sent } = client([http500(), notFound(), asyncOk()])
    const input = saleInput()
    expect(await pay.sale(input)).toMatchObject({ type: "async-response" })
    const sales = sent.filter((s) => s.url.includes("/sale/"))
    expect(sales).toHaveLength(2)
    expect(sales.map((s) => s.form.get("client_orderid"))).toEqual([input.client_orderid, input.client_orderid])
  })

  it("a connection refused before sending is resent without asking status", async () => {
    const { pay, sent } = client([refused(), asyncOk()])
    await pay.sale(saleInput())
    expect(sent.map((s) => new URL(s.url).pathname)).toEqual(["/api/v2/sale/1001", "/api/v2/sale/1001"])
  })

  it("maps client-order-id / client-orderid to status' client_orderid (3DS upload: order read first)", async () => {
    const { pay, sent } = client([statusOk("processing", { "order-stage": "sale_3d_validating" }), reset(), statusOk("processing", { "order-stage": "sale_3d_done" })])
    const r = await pay.uploadCresResult({ "client-order-id": "c-9", orderid: "55", cRes: "abc" })
    expect(r).toMatchObject({ type: "reconciled", reason: "TransportError" })
    expect(sent.map((s) => new URL(s.url).pathname.split("/").at(-2))).toEqual(["status", "upload-cres-result", "status"])
    expect(sent[0]!.form.get("client_orderid")).toBe("c-9")
    expect(sent[2]!.form.get("orderid")).toBe("55")
  })

  it("on an existing order (capture) the order is read first; a landed capture is proven by captured-amount, never resent", async () => {
    const { pay, sent } = client([statusOk("approved", { amount: "10.00", "captured-amount": "0.00" }), { hang: true }, statusOk("approved", { amount: "10.00", "captured-amount": "5.00", "transaction-type": "capture" })], { timeoutMs: 20 })
    const r = await pay.capture({ client_orderid: "c-1", orderid: "123", amount: "5.00", currency: "USD" })
    expect(r).toMatchObject({ type: "reconciled", reason: "Timeout", statusBefore: { "captured-amount": "0.00" }, statusReply: { "captured-amount": "5.00" } })
    expect(sent.filter((s) => s.url.includes("/capture/"))).toHaveLength(1)
  })

  it("status unable to tell → OutcomeUnknown with mayHaveApplied (and no resend)", async () => {
    const { pay, sent } = client([reset(), http500(), http500(), http500(), http500()])
    const e = await rejection(pay.sale(saleInput({ client_orderid: "c-unknown" })))
    expect(e).toMatchObject({ _tag: "OutcomeUnknown", client_orderid: "c-unknown", lastError: "TransportError", mayHaveApplied: true })
    expect(typeof e["idempotencyKey"]).toBe("string")
    expect(sent.filter((s) => s.url.includes("/sale/"))).toHaveLength(1)
  })

  it("retries running out after an unknown outcome never end in the raw error: the order is proven absent → OutcomeUnknown(mayHaveApplied: false)", async () => {
    const { pay } = client([http500(), notFound(), http500(), notFound(), notFound(), notFound(), notFound(), notFound(), notFound(), notFound(), notFound(), notFound(), notFound(), notFound()], { retry: { ...fast, maxRetries: 1 } })
    expect(await rejection(pay.sale(saleInput()))).toMatchObject({ _tag: "OutcomeUnknown", mayHaveApplied: false, lastError: "GatewayServerError" })
  })
})

describe("signing per auth scheme", () => {
  it("payout carries an OAuth HMAC-SHA1 Authorization header and no control", async () => {
    const { pay, sent } = client([asyncOk()])
    await pay.payout({ client_orderid: coid(), amount: "1.00", currency: "USD", credit_card_number: "4111111111111111" })
    expect(sent[0]!.headers.get("authorization")).toMatch(/^OAuth .*oauth_signature_method="HMAC-SHA1"/)
    expect(sent[0]!.form.has("control")).toBe(false)
  })

  it("a v4 operation without privateKeyPem is an InputError naming it", async () => {
    const { pay, sent } = client([])
    expect(await rejection(pay.payoutPay({ client_orderid: "c", orderid: "1" }))).toMatchObject({ _tag: "InputError", field: "privateKeyPem" })
    expect(await rejection(pay.payoutPay({ client_orderid: "c", orderid: "1" }, { idempotencyKey: "k-1" }))).toMatchObject({ idempotencyKey: "k-1" })
    expect(sent).toHaveLength(0)
  })
})

describe("layers", () => {
  it("PayClient.layerConfig reads the environment, with secrets Redacted", async () => {
    const provider = ConfigProvider.fromMap(new Map([
      ["PAYKIT_BASE_URL", "http://gw.test/"],
      ["PAYKIT_LOGIN", "paykit-test"],
      ["PAYKIT_CONTROL_KEY", merchant.controlKey],
      ["PAYKIT_ENDPOINT_ID", "1001"],
      ["PAYKIT_ENDPOINT_GROUP_ID", "2001"]
    ]))
    const config = await Effect.runPromise(Effect.withConfigProvider(payClientConfigFromEnv, provider))
    expect(Redacted.isRedacted(config.controlKey)).toBe(true)
    expect(config.baseUrl).toBe("http://gw.test")
    expect(config.endpointGroupId).toBe("2001")
    const stub = stubFetch([statusOk()])
    const layer = PayClient.layerConfig({ fetch: stub.fetch }).pipe(Layer.provide(Layer.setConfigProvider(provider)))
    const reply = await Effect.runPromise(Effect.flatMap(PayClient, (c) => c.status({ client_orderid: "c-1" }, { endpoint: "group" })).pipe(Effect.provide(layer)))
    expect(reply.status).toBe("approved")
    expect(stub.sent[0]!.url).toBe("http://gw.test/api/v2/status/2001")
  })

  it("reads the private key from PAYKIT_PRIVATE_KEY_FILE", async () => {
    const { generateKeyPairSync } = await import("node:crypto")
    const { mkdtempSync, writeFileSync } = await import("node:fs")
    const { join } = await import("node:path")
    const { tmpdir } = await import("node:os")
    const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    const file = join(mkdtempSync(join(tmpdir(), "paykit-")), "key.pem")
    writeFileSync(file, pem)
    const env = (extra: Array<[string, string]>) => ConfigProvider.fromMap(new Map([
      ["PAYKIT_BASE_URL", "http://gw.test"], ["PAYKIT_LOGIN", "l"], ["PAYKIT_CONTROL_KEY", "k"], ["PAYKIT_ENDPOINT_ID", "1"], ...extra
    ]))
    const config = await Effect.runPromise(Effect.withConfigProvider(payClientConfigFromEnv, env([["PAYKIT_PRIVATE_KEY_FILE", file]])))
    expect(config.privateKeyPem && Redacted.value(config.privateKeyPem)).toBe(pem)
    const missing = await Effect.runPromise(Effect.flip(Effect.withConfigProvider(payClientConfigFromEnv, env([["PAYKIT_PRIVATE_KEY_FILE", `${file}.nope`]]))))
    expect(String(missing)).toContain("PAYKIT_PRIVATE_KEY_FILE")
  })

  it("PayClient.layer from a config object", async () => {
    const stub = stubFetch([statusOk()])
    const program = Effect.flatMap(PayClient, (c) => c.status({ client_orderid: "c-1" }))
    const reply = await Effect.runPromise(program.pipe(Effect.provide(PayClient.layer({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch }))))
    expect(reply["paynet-order-id"]).toBe("123")
  })
})
