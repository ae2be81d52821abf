/**
 * The signed escape hatch, `request()` (docs/decisions.md#24-a-signed-escape-hatch), against the
 * simulator's test-only operations beyond the spec (`/api/v2/x-test/loyalty-credit` and
 * `loyalty-balance`, testkit's x-test-operations.ts): an operation outside the spec is signed and
 * sent as described, a read is resent after a transient failure, a money call whose reply is lost
 * is reconciled by `client_orderid` to the applied result without a second send, a refusal is a
 * typed error, hooks and spans show the call like any other, and a description that breaks a rule
 * is an `InputError` naming the field and the rule before anything is sent. On the controlled
 * clock (support/test-time.ts).
 */
import { createHash } from "node:crypto"
import { NodeSdk } from "@effect/opentelemetry"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { testMerchant, type Simulator } from "@paykit/testkit"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, isReconciled, lastResponseOf, makePayClient, openMemoryStore, resolveConfig, type PayClientOptions, type PayRequest, type PayRequestView, type PayResponseView } from "../../src/index"
import { coid } from "../support/fixtures"
import { BASE_URL, clientOptions, setup } from "../support/sim"
import { asyncOk, reset, statusOk, stubFetch } from "../support/stub"
import { startTestTime, timed, useTestTime } from "../support/test-time"

useTestTime()
beforeEach(startTestTime)

const PAN = "4111111111111111"
const CREDIT_PATH = "/api/v2/x-test/loyalty-credit/{endpointId}"
const BALANCE_PATH = "/api/v2/x-test/loyalty-balance/{endpointId}"
const ENDPOINT = String(testMerchant.endpointId)

/** The worked example of the README: a loyalty credit, an operation the spec does not have. */
function credit(fields: Partial<Record<string, string>> = {}): PayRequest<"money"> {
  return {
    path: CREDIT_PATH,
    auth: "control",
    kind: "money",
    controlFields: ["endpointId", "client_orderid", "amount"],
    fields: { client_orderid: coid("lc"), amount: "2.50", currency: "USD", loyalty_account: "LA-7", ...fields } as Record<string, string>
  }
}

/** Its read: the account's approved credits (the control covers login, filled from the config). */
const balance = (account = "LA-7"): PayRequest<"read"> => ({
  path: BALANCE_PATH,
  auth: "control",
  kind: "read",
  controlFields: ["login", "loyalty_account", "currency"],
  fields: { loyalty_account: account, currency: "USD" }
})

/** How many requests of one path the simulator received (a dropped connection counts too). */
const sent = (sim: Simulator, command: string) => sim.requests.entries(0).filter((r) => r.path.startsWith(`/api/v2/x-test/${command}/`)).length

let sims: Array<Simulator> = []
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()))
  sims = []
})
function world(extra: Partial<PayClientOptions> = {}) {
  const w = setup({}, extra)
  sims.push(w.sim)
  return w
}

describe("request(): an operation beyond the spec", () => {
  it("signs a money call with the listed control fields, sends it once, and returns the reply as strings with its key", async () => {
    const { sim, pay } = world()
    const request = credit()
    const result = await pay.request(request)
    if (isReconciled(result)) throw new Error("expected the call's own reply")
    expect(result).toMatchObject({ type: "async-response", status: "processing", "merchant-order-id": request.fields["client_orderid"], "end-point-id": ENDPOINT })
    for (const value of Object.values(result)) expect(typeof value).toBe("string")
    expect(result.idempotencyKey).toEqual(expect.any(String))
    expect(lastResponseOf(result)).toEqual({ attempts: 1, serialNumber: result["serial-number"], httpStatus: 200 })
    expect(sent(sim, "loyalty-credit")).toBe(1)
    // The simulator's status sees the credit as a money-moving transaction of the order.
    const status = await pay.status({ client_orderid: request.fields["client_orderid"]! })
    expect(status).toMatchObject({ "paynet-order-id": result["paynet-order-id"], "transaction-type": "loyalty-credit", amount: "2.50", currency: "USD" })
  })

  it("runs on the Effect service too, and replays a call made again under its idempotency key without sending it", async () => {
    const { sim, service } = world()
    const request = credit()
    const first = await Effect.runPromise(service.request(request, { idempotencyKey: "lc-key-1" }))
    const again = await Effect.runPromise(service.request(request, { idempotencyKey: "lc-key-1" }))
    expect(again).toEqual(first)
    expect(first).toMatchObject({ type: "async-response", idempotencyKey: "lc-key-1" })
    expect(sent(sim, "loyalty-credit")).toBe(1)
    // The same key for a different request is the caller's bug, named as for typed calls.
    const other = await Effect.runPromise(Effect.flip(service.request(credit({ amount: "3.00" }), { idempotencyKey: "lc-key-1" })))
    expect(other).toMatchObject({ _tag: "InputError", field: "idempotencyKey", rule: "already used for a different request" })
    expect(sent(sim, "loyalty-credit")).toBe(1)
  })

  it("reads: fills login for a control over it, and resends a read after a transient failure", async () => {
    const { sim, pay } = world()
    await pay.request(credit({ loyalty_account: "LA-read" }))
    await sim.clock.advance(1)
    sim.faults.add({ kind: "http-500", count: 1 })
    const read = await pay.request(balance("LA-read"))
    expect(read).toEqual({ type: "loyalty-balance", "serial-number": expect.any(String), loyalty_account: "LA-read", currency: "USD", balance: "2.50", credits: "1" })
    expect(lastResponseOf(read)).toMatchObject({ attempts: 2, httpStatus: 200 })
    expect(sent(sim, "loyalty-balance")).toBe(2)
  })

  it("reconciles a money call whose reply was lost after processing to the applied result, without a second send", async () => {
    const { sim, pay } = world()
    sim.faults.add({ kind: "reset-after", count: 1 })
    const request = credit()
    const result = await pay.request(request, { idempotencyKey: "lost-1" })
    expect(result).toMatchObject({
      type: "reconciled",
      reason: "TransportError",
      status: "approved",
      "merchant-order-id": request.fields["client_orderid"],
      idempotencyKey: "lost-1",
      statusReply: { "transaction-type": "loyalty-credit", amount: "2.50", currency: "USD" }
    })
    expect(sent(sim, "loyalty-credit")).toBe(1)
    expect(sim.orders().filter((o) => o.client_orderid === request.fields["client_orderid"])).toHaveLength(1)
    // Called again under its key: the reconciled result, still nothing sent.
    expect(await pay.request(request, { idempotencyKey: "lost-1" })).toEqual(result)
    expect(sent(sim, "loyalty-credit")).toBe(1)
  })

  it("keeps its intent in a shared store like a typed call: another instance replays the reconciled result, nothing sent", async () => {
    const { sim } = world()
    const store = await openMemoryStore()
    try {
      const a = createPayClient(clientOptions(sim, { store }))
      const b = createPayClient(clientOptions(sim, { store }))
      sim.faults.add({ kind: "reset-after", count: 1 })
      const request = credit()
      const first = await a.request(request, { idempotencyKey: "shared-lc" })
      expect(first).toMatchObject({ type: "reconciled", idempotencyKey: "shared-lc" })
      const replayed = await b.request(request, { idempotencyKey: "shared-lc" })
      expect(replayed).toMatchObject({ type: "reconciled", "merchant-order-id": request.fields["client_orderid"], idempotencyKey: "shared-lc" })
      expect(sent(sim, "loyalty-credit")).toBe(1)
    } finally {
      await store.close()
    }
  })

  it("sends a money call lost before processing again once status proves nothing landed", async () => {
    const { sim, pay } = world()
    sim.faults.add({ kind: "reset-before", count: 1 })
    const result = await pay.request(credit())
    expect(result).toMatchObject({ type: "async-response", status: "processing" })
    expect(sent(sim, "loyalty-credit")).toBe(2)
    expect(sim.orders()).toHaveLength(1)
  })

  it("ends a refused call in a typed error and does not resend it", async () => {
    const { sim, pay } = world()
    const first = credit()
    await pay.request(first)
    // A different credit under the same client_orderid: the gateway's lifecycle refusal.
    const conflict = await pay.request(credit({ client_orderid: first.fields["client_orderid"]!, amount: "9.00" })).then(() => undefined, (e: unknown) => e)
    expect(conflict).toMatchObject({ _tag: "GatewayValidationError", operation: "loyalty-credit", errorCode: "client-orderid-conflict", category: "lifecycle", idempotencyKey: expect.any(String) })
    expect(sent(sim, "loyalty-credit")).toBe(2)
    // Signed with another key: refused as unauthenticated.
    const wrongKey = setup({}, { controlKey: "0000AAAA-1111-2222-3333-444455556666" })
    sims.push(wrongKey.sim)
    const refused = await wrongKey.pay.request(credit()).then(() => undefined, (e: unknown) => e)
    expect(refused).toMatchObject({ _tag: "AuthenticationError", errorCode: "control-mismatch" })
    expect(sent(wrongKey.sim, "loyalty-credit")).toBe(1)
  })
})

type Seen = { readonly hook: "request"; readonly view: PayRequestView } | { readonly hook: "response"; readonly view: PayResponseView }

describe("request() in the hooks", () => {
  it("shows the call and the status lookups that reconcile it as redacted views, like any other call", async () => {
    const seen: Array<Seen> = []
    const { sim, pay } = world({
      onRequest: (view) => void seen.push({ hook: "request", view }),
      onResponse: (view) => void seen.push({ hook: "response", view })
    })
    sim.faults.add({ kind: "reset-after", count: 1 })
    // A card number among the fields (the route ignores it) must reach no hook.
    const request = credit({ credit_card_number: PAN })
    const clientOrderId = request.fields["client_orderid"]!
    const result = await pay.request(request)
    expect(result).toMatchObject({ type: "reconciled" })
    const common = { operation: "loyalty-credit", path: `/api/v2/x-test/loyalty-credit/${ENDPOINT}`, client_orderid: clientOrderId }
    expect(seen.slice(0, 2)).toEqual([
      { hook: "request", view: { ...common, attempt: 1 } },
      { hook: "response", view: { ...common, attempt: 1, status: undefined, durationMs: 0, serialNumber: undefined, error: "TransportError" } }
    ])
    const lookups = seen.slice(2)
    expect(lookups.length).toBeGreaterThanOrEqual(2)
    for (const s of lookups) expect(s.view).toMatchObject({ operation: "STATUS", client_orderid: clientOrderId, path: `/api/v2/status/${ENDPOINT}` })
    const text = JSON.stringify(seen)
    for (const secret of [PAN, testMerchant.controlKey, "LA-7", "2.50"]) expect(text).not.toContain(secret)
    for (const s of seen) expect(Object.keys(s.view).sort()).toEqual(s.hook === "request" ? ["attempt", "client_orderid", "operation", "path"] : ["attempt", "client_orderid", "durationMs", "error", "operation", "path", "serialNumber", "status"])
    // A named operation goes by its name.
    seen.length = 0
    await pay.request({ ...balance(), operation: "LOYALTY_BALANCE" })
    expect(seen.map((s) => s.view.operation)).toEqual(["LOYALTY_BALANCE", "LOYALTY_BALANCE"])
    expect(seen[1]!.view).toMatchObject({ status: 200, serialNumber: expect.any(String), client_orderid: "" })
  })
})

// One OpenTelemetry SDK for the file, as in an application (tracing.test.ts).
const exporter = new InMemorySpanExporter()
const traced = ManagedRuntime.make(NodeSdk.layer(() => ({ resource: { serviceName: "paykit-hatch-test" }, spanProcessor: new SimpleSpanProcessor(exporter) })))
afterAll(() => traced.dispose())

describe("request() in the spans", () => {
  it("opens a CLIENT span with the usual attributes, and the reconciliation of a lost reply under it", async () => {
    const { sim } = world()
    const service = makePayClient(resolveConfig(clientOptions(sim)))
    sim.faults.add({ kind: "reset-after", count: 1 })
    const request = credit({ credit_card_number: PAN })
    const clientOrderId = request.fields["client_orderid"]!
    await traced.runPromise(service.request(request))
    await traced.runPromise(service.request(balance()))
    const spans = exporter.getFinishedSpans()
    const calls = spans.filter((s) => s.name === "paykit.request")
    const creditSpan = calls.find((s) => s.attributes["client_orderid"] === clientOrderId)!
    expect(creditSpan.kind).toBe(SpanKind.CLIENT)
    expect(creditSpan.attributes).toMatchObject({
      operation: "loyalty-credit",
      endpoint: ENDPOINT,
      attempt: 1,
      outcome: "reconciled",
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "server.port": 4010,
      "url.full": `${BASE_URL}/api/v2/x-test/loyalty-credit/${ENDPOINT}`,
      "paykit.operation": "loyalty-credit",
      "paykit.endpoint_id": ENDPOINT,
      "paykit.client_orderid": clientOrderId,
      "paykit.attempts": 1,
      "paykit.outcome": "reconciled"
    })
    const reconcile = spans.filter((s) => s.name === "paykit.reconcile" && s.parentSpanContext?.spanId === creditSpan.spanContext().spanId)
    expect(reconcile).toHaveLength(1)
    expect(reconcile[0]!.attributes).toMatchObject({ operation: "loyalty-credit", cause: "TransportError", client_orderid: clientOrderId })
    const readSpan = calls.find((s) => s.attributes["operation"] === "loyalty-balance")!
    expect(readSpan.attributes).toMatchObject({ outcome: "ok", "http.response.status_code": 200, "paykit.attempts": 1, "url.full": `${BASE_URL}/api/v2/x-test/loyalty-balance/${ENDPOINT}` })
    expect(readSpan.attributes["paykit.serial_number"]).toEqual(expect.any(String))
    const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })))
    for (const secret of [PAN, testMerchant.controlKey, "LA-7"]) expect(text).not.toContain(secret)
  })
})

describe("request() input errors", () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ["no object", "nope", "request", /expected an object/],
    ["no kind", { ...credit(), kind: "write" }, "kind", /"read" or "money"/],
    ["a path outside the API root's shape", { ...credit(), path: "https://evil.example/api/{endpointId}" }, "path", /starting with \//],
    ["a path with ..", { ...credit(), path: "/api/../admin/{endpointId}" }, "path", /no empty, \. or \.\. segment/],
    ["a path with a query", { ...credit(), path: "/api/v2/x?debug=1/{endpointId}" }, "path", /no query/],
    ["a path without the endpoint", { ...credit(), path: "/api/v2/x-test/loyalty-credit" }, "path", /end in \/\{endpointId\}/],
    ["a spec operation id as name", { ...credit(), operation: "SALE" }, "operation", /operation id of the spec/],
    ["an unknown auth", { ...credit(), auth: "basic" }, "auth", /"control", "oauth-hmac-sha1" or "oauth-rsa-sha256"/],
    ["a number as a value", credit({ amount: 2.5 as unknown as string }), "fields.amount", /Expected string/],
    ["a line break in a value", credit({ loyalty_account: "LA\r\nX-Injected: 1" }), "fields.loyalty_account", /must not contain CR, LF or NUL/],
    ["a field the client adds", credit({ control: "abc" }), "fields.control", /added by the client/],
    ["a bad field name", credit({ "a b": "x" }), "fields.a b", /field name must be/],
    ["a __proto__ field", { ...credit(), fields: JSON.parse('{"__proto__": "x", "client_orderid": "c"}') }, "fields.__proto__", /field name must be/],
    ["a control field not sent", { ...credit(), controlFields: ["endpointId", "client_orderid", "amount", "email"] }, "controlFields", /lists email, which fields lacks/],
    ["no control fields", { ...credit(), controlFields: [] }, "controlFields", /non-empty array/],
    ["control fields with OAuth", { ...credit(), auth: "oauth-hmac-sha1" }, "controlFields", /only with auth "control"/],
    ["an amount the digest cannot write", credit({ amount: "2.505" }), "fields.amount", /./],
    ["an amount without currency", credit({ currency: undefined }), "fields.currency", /required beside amount/],
    ["a money call without client_orderid", { ...credit({ client_orderid: undefined }), controlFields: ["endpointId", "amount"] }, "fields.client_orderid", /required for a money call/],
    ["a money call on an existing order", credit({ orderid: "123" }), "fields.orderid", /existing order cannot be reconciled/]
  ]
  for (const [what, description, field, rule] of cases) {
    it(`${what} → InputError on ${field}, nothing sent`, async () => {
      const { sim, pay } = world()
      const clean = JSON.parse(JSON.stringify(description ?? null)) as unknown
      const error = await pay.request(clean as PayRequest).then(() => undefined, (e: unknown) => e)
      expect(error).toMatchObject({ _tag: "InputError", field })
      expect((error as { rule: string }).rule).toMatch(rule)
      expect(sim.requests.entries(0)).toHaveLength(0)
    })
  }

  it("never shows the value it refused, and gives a money call's error its idempotency key", async () => {
    const { sim, pay } = world()
    const error = await pay.request(credit({ credit_card_number: `${PAN}\n` })).then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InputError", operation: "loyalty-credit", field: "fields.credit_card_number", idempotencyKey: expect.any(String) })
    expect(JSON.stringify(error) + String((error as Error).message)).not.toContain(PAN)
    const read = await pay.request({ ...balance(), fields: { loyalty_account: `${PAN}\r` , currency: "USD" } }).then(() => undefined, (e: unknown) => e)
    expect(read).toMatchObject({ _tag: "InputError", idempotencyKey: undefined })
    expect(sim.requests.entries(0)).toHaveLength(0)
    // The Effect service fails alike.
    const effect = await Effect.runPromise(Effect.flip(makePayClient(resolveConfig(clientOptions(sim))).request({ ...credit(), path: "/x/{endpointId}/y" } as PayRequest)))
    expect(effect).toMatchObject({ _tag: "InputError", field: "path" })
  })
})

describe("request() with OAuth", () => {
  it("signs OAuth HMAC-SHA1 and RSA-SHA256 as the typed OAuth operations do: the gateway verifies both", async () => {
    const { sim, pay } = world()
    // The spec's payout (OAuth HMAC-SHA1) with its fields as written, through the hatch.
    const payout = await pay.request({
      path: "/api/v2/payout/{endpointId}", auth: "oauth-hmac-sha1", kind: "money",
      fields: { client_orderid: coid("po"), amount: "5.00", currency: "USD", credit_card_number: PAN, card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030", order_desc: "payout" }
    })
    expect(payout).toMatchObject({ type: "async-response", status: "processing" })
    // The spec's payout-check (OAuth RSA-SHA256).
    const check = await pay.request({
      path: "/api/v4/payout-check/{endpointId}", auth: "oauth-rsa-sha256", kind: "money",
      fields: { client_orderid: coid("pc"), amount: "5.00", currency: "USD", credit_card_number: PAN, card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030", order_desc: "payout" }
    })
    expect(check).toMatchObject({ type: "async-response" })
    expect(sim.requests.entries(0).map((r) => r.status)).toEqual([200, 200])
    // Without the private key, RSA is refused before anything is sent.
    const { sim: bare, pay: noKey } = world({ privateKeyPem: undefined })
    const error = await noKey.request({ path: "/api/v4/payout-check/{endpointId}", auth: "oauth-rsa-sha256", kind: "read", fields: {} }).then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InputError", field: "privateKeyPem" })
    expect(bare.requests.entries(0)).toHaveLength(0)
  })
})

describe("request() on the wire", () => {
  const base = { baseUrl: "http://gw.test", login: testMerchant.login, controlKey: testMerchant.controlKey, endpointId: 1001, endpointGroupId: 2002, retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 }, reconcile: { settleMs: 20, pollIntervalMs: 5 } }

  it("sends the fields as given, then the control: SHA-1 of the listed values in order (amount in cents) and the key", async () => {
    const stub = stubFetch([asyncOk()])
    const pay = createPayClient({ ...base, fetch: stub.fetch })
    await pay.request(credit({ client_orderid: "lc-wire", amount: "10.42", loyalty_account: "LA 7&8" }))
    const { url, form, headers } = stub.sent[0]!
    expect(url).toBe("http://gw.test/api/v2/x-test/loyalty-credit/1001")
    expect(headers.get("accept")).toBe("application/vnd.pay+json")
    expect([...form.keys()]).toEqual(["client_orderid", "amount", "currency", "loyalty_account", "control"])
    expect(form.get("loyalty_account")).toBe("LA 7&8")
    const expected = createHash("sha1").update(`1001lc-wire1042${testMerchant.controlKey}`, "utf8").digest("hex")
    expect(form.get("control")).toBe(expected)
  })

  it("goes to the endpoint group's path form when asked, the group id in the digest", async () => {
    const stub = stubFetch([asyncOk()])
    const pay = createPayClient({ ...base, fetch: stub.fetch, groupPathForm: "group-path" })
    await pay.request(credit({ client_orderid: "lc-group" }), { endpoint: "group" })
    expect(stub.sent[0]!.url).toBe("http://gw.test/api/v2/x-test/loyalty-credit/group/2002")
    expect(stub.sent[0]!.form.get("control")).toBe(createHash("sha1").update(`2002lc-group250${testMerchant.controlKey}`, "utf8").digest("hex"))
  })

  it("decodes the reply as strings: numbers and booleans written out, null dropped, card data in its texts masked", async () => {
    const stub = stubFetch([{ status: 200, body: { type: "x", "paynet-order-id": 123, points: 2.5, done: true, gone: null, "error-message": `card ${PAN} refused` } }])
    const read = await createPayClient({ ...base, fetch: stub.fetch }).request(balance())
    expect(read).toEqual({ type: "x", "paynet-order-id": "123", points: "2.5", done: "true", "error-message": "card 411111******1111 refused" })
  })

  it("refuses a reply that is not a flat object: a read's DecodeError; a money call's reply then proven from status", async () => {
    const nested = { status: 200, body: { type: "x", nested: { a: "b" } } }
    const stub = stubFetch([nested])
    const error = await createPayClient({ ...base, fetch: stub.fetch }).request(balance()).then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "DecodeError", operation: "loyalty-balance", issue: expect.stringContaining("nested") })
    const money = stubFetch([nested, statusOk("approved", { "merchant-order-id": "lc-nested", amount: "2.50", currency: "USD" })])
    const result = await createPayClient({ ...base, fetch: money.fetch }).request(credit({ client_orderid: "lc-nested" }))
    expect(result).toMatchObject({ type: "reconciled", reason: "DecodeError", "merchant-order-id": "lc-nested" })
    expect(money.sent.map((s) => new URL(s.url).pathname)).toEqual(["/api/v2/x-test/loyalty-credit/1001", "/api/v2/status/1001"])
  })

  it("bounds a read by timeoutMs per attempt and deadlineMs overall, as a typed read", async () => {
    const stub = stubFetch([{ hang: true }, { hang: true }, { hang: true }, { hang: true }])
    const pay = createPayClient({ ...base, fetch: stub.fetch, retry: { maxRetries: 5, baseDelayMs: 1, maxDelayMs: 2, jitter: false } })
    const { tookMs, value } = await timed(pay.request(balance(), { timeoutMs: 40, deadlineMs: 100 }).then(() => undefined, (e: unknown) => e))
    expect(value).toMatchObject({ _tag: "Timeout", operation: "loyalty-balance" })
    expect(tookMs).toBe(100)
    expect(stub.sent).toHaveLength(3)
  })

  it("ends a lost money call whose order status contradicts (another amount) in ReconcileConflict, never a resend", async () => {
    const stub = stubFetch([reset(), statusOk("approved", { "merchant-order-id": "lc-c", amount: "9.00", currency: "USD" })])
    const error = await createPayClient({ ...base, fetch: stub.fetch }).request(credit({ client_orderid: "lc-c" })).then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "ReconcileConflict", field: "amount", expected: "2.50", found: "9.00" })
    expect(stub.sent).toHaveLength(2)
  })
})

describe("types", () => {
  it("types a read's result as a record of strings and a money call's as keyed or reconciled", async () => {
    const { pay } = world()
    const read: Readonly<Record<string, string>> = await pay.request(balance())
    expect(read["type"]).toBe("loyalty-balance")
    const money = await pay.request(credit())
    // @ts-expect-error a money call's result may be Reconciled: narrow by `type` first
    const notNarrowed: Readonly<Record<string, string>> = money
    expect(notNarrowed).toBeDefined()
    if (!isReconciled(money)) expect(money.idempotencyKey).toEqual(expect.any(String))
    // @ts-expect-error controlFields come only with auth "control"
    const bad: PayRequest = { path: CREDIT_PATH, auth: "oauth-hmac-sha1", kind: "read", fields: {}, controlFields: ["login"] }
    expect(bad).toBeDefined()
  })
})
