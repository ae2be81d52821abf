/**
 * Tracing for real: the client's spans through @effect/opentelemetry into an OpenTelemetry SDK
 * (`NodeSdk.layer` with a `SimpleSpanProcessor` over an `InMemorySpanExporter`), exactly what a
 * merchant wires to an OTLP collector (README, "Tracing"), against the in-process simulator.
 *
 * - one CLIENT span per call, `paykit.<method>`, with `operation`, `endpoint`, `attempt`, `outcome`
 *   and `retries`, and OpenTelemetry's HTTP client attributes (`http.request.method`,
 *   `server.address`, `url.full`, `http.response.status_code`) beside `paykit.*` ones;
 * - a money-moving call whose reply is lost (the simulator's `reset-after` fault, added through its
 *   `POST /__sim/faults` route) shows the reconciliation as a child span `paykit.reconcile` with the
 *   `paykit.status` lookup under it, and ends `outcome: reconciled`;
 * - no PAN, CVV, control key, private key or full control digest in any span name, attribute,
 *   event or status (searched for as redaction.test.ts does);
 * - the README's collector wiring (`Otlp.layerJson` over `FetchHttpClient`) delivers the spans as
 *   OTLP/HTTP JSON to a collector (a local HTTP endpoint here), with no secret in what is sent.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { NodeSdk, Otlp } from "@effect/opentelemetry"
import { FetchHttpClient } from "@effect/platform"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base"
import { createSimulator, testMerchant } from "@paykit/testkit"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePayClient, resolveConfig, type PayClientService } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { BASE_URL, clientOptions } from "../support/sim"

const PAN = "4111111111111111"
const CVV = "9731"
const CONTROL_KEY = testMerchant.controlKey
const PRIVATE_KEY_LINES = testMerchant.privateKeyPem.split("\n").filter((l) => l.length > 40)

const exporter = new InMemorySpanExporter()
const TracingLive = NodeSdk.layer(() => ({
  resource: { serviceName: "paykit-tracing-test" },
  spanProcessor: new SimpleSpanProcessor(exporter)
}))

const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })
const sentControls: Array<string> = []
const sentAuthorizations: Array<string> = []
// the client's fetch: the simulator in process, recording every signature that went out
const recordingFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const request = new Request(input, init)
  const body = await request.clone().text()
  const control = new URLSearchParams(body).get("control")
  if (control !== null) sentControls.push(control)
  const authorization = request.headers.get("authorization")
  if (authorization !== null) sentAuthorizations.push(authorization)
  return sim.fetch(request)
}
let pay: PayClientService
// one SDK for the whole file, as in an application: shutting it down would clear the exporter
const runtime = ManagedRuntime.make(TracingLive)
const run = <A, E>(effect: Effect.Effect<A, E>) => runtime.runPromise(effect)

/** Adds a fault rule the way a test in any language would: the simulator's faults route. */
async function addFault(rule: Record<string, unknown>): Promise<void> {
  const response = await sim.fetch(new Request(`${BASE_URL}/__sim/faults`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(rule)
  }))
  expect(response.status).toBeLessThan(300)
}

const spanId = (s: ReadableSpan) => s.spanContext().spanId
const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId
const named = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name)
const ofOrder = (name: string, client_orderid: string) => named(name).filter((s) => s.attributes["client_orderid"] === client_orderid)

let approved: ReturnType<typeof saleInput>
let reconciled: ReturnType<typeof saleInput>
let retriedStatus: { client_orderid: string }

beforeAll(async () => {
  pay = makePayClient(resolveConfig(clientOptions(sim, { fetch: recordingFetch })))

  // 1. a plain sale and its awaitFinal
  approved = saleInput({ cvv2: CVV })
  await run(Effect.gen(function*() {
    yield* pay.sale(approved)
    yield* pay.awaitFinal({ client_orderid: approved.client_orderid })
  }))

  // 2. a sale whose reply is lost after the gateway processed it: reconciled through status
  reconciled = saleInput({ cvv2: CVV })
  await addFault({ operation: "SALE", kind: "reset-after", count: 1 })
  const result = await run(pay.sale(reconciled))
  expect(result).toMatchObject({ type: "reconciled", reason: "TransportError" })

  // 3. a read that fails once with a 500 and is retried
  retriedStatus = approved
  await addFault({ operation: "STATUS", kind: "http-500", count: 1 })
  await run(pay.status({ client_orderid: retriedStatus.client_orderid }))
})

afterAll(async () => {
  await runtime.dispose()
  await sim.close()
})

describe("tracing through @effect/opentelemetry", () => {
  it("exports one CLIENT span per call with operation, endpoint, attempt and outcome", () => {
    const sales = ofOrder("paykit.sale", approved.client_orderid)
    expect(sales).toHaveLength(1)
    const sale = sales[0]!
    expect(sale.kind).toBe(SpanKind.CLIENT)
    expect(sale.attributes).toMatchObject({ operation: "SALE", attempt: 1, outcome: "ok" })
    expect(String(sale.attributes["endpoint"])).toBe(String(testMerchant.endpointId))
    expect(sale.resource.attributes["service.name"]).toBe("paykit-tracing-test")

    // awaitFinal is its own span, with each status poll a child span of it
    const waits = named("paykit.awaitFinal").filter((s) => s.attributes["client_orderid"] === approved.client_orderid)
    expect(waits).toHaveLength(1)
    const polls = named("paykit.status").filter((s) => parentId(s) === spanId(waits[0]!))
    expect(polls.length).toBeGreaterThanOrEqual(1)
    for (const poll of polls) expect(poll.attributes).toMatchObject({ operation: "STATUS", outcome: "ok" })
  })

  it("shows the reconciliation of a lost reply as a child span with the status lookup under it", () => {
    const sales = ofOrder("paykit.sale", reconciled.client_orderid)
    expect(sales).toHaveLength(1)
    const sale = sales[0]!
    expect(sale.attributes).toMatchObject({ operation: "SALE", attempt: 1, outcome: "reconciled" })
    const reconcile = named("paykit.reconcile").filter((s) => parentId(s) === spanId(sale))
    expect(reconcile).toHaveLength(1)
    expect(reconcile[0]!.attributes).toMatchObject({ operation: "SALE", cause: "TransportError", client_orderid: reconciled.client_orderid })
    const lookup = named("paykit.status").filter((s) => parentId(s) === spanId(reconcile[0]!))
    expect(lookup).toHaveLength(1)
    expect(lookup[0]!.attributes).toMatchObject({ operation: "STATUS", outcome: "ok" })
  })

  it("records the attempt of a retried read", () => {
    const statuses = ofOrder("paykit.status", retriedStatus.client_orderid).filter((s) => parentId(s) === undefined)
    expect(statuses).toHaveLength(1)
    expect(statuses[0]!.attributes).toMatchObject({ operation: "STATUS", attempt: 2, outcome: "ok" })
  })

  it("carries `retries` on every call span (0 for a first-attempt success, 1 after one retry)", () => {
    expect(ofOrder("paykit.sale", approved.client_orderid)[0]!.attributes["retries"]).toBe(0)
    const retried = ofOrder("paykit.status", retriedStatus.client_orderid).filter((s) => parentId(s) === undefined)[0]!
    expect(retried.attributes["retries"]).toBe(1)
  })

  it("follows OpenTelemetry's HTTP client conventions beside paykit.* attributes (docs/decisions.md#23-request-hooks)", () => {
    const sale = ofOrder("paykit.sale", approved.client_orderid)[0]!
    expect(sale.attributes).toMatchObject({
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "server.port": 4010,
      "url.full": `${BASE_URL}/api/v2/sale/${testMerchant.endpointId}`,
      "http.response.status_code": 200,
      "paykit.operation": "SALE",
      "paykit.endpoint_id": String(testMerchant.endpointId),
      "paykit.client_orderid": approved.client_orderid,
      "paykit.attempts": 1,
      "paykit.outcome": "ok"
    })
    expect(sale.attributes["paykit.serial_number"]).toEqual(expect.any(String))
    // the retried read: the status code of its last reply, two attempts
    const retried = ofOrder("paykit.status", retriedStatus.client_orderid).filter((s) => parentId(s) === undefined)[0]!
    expect(retried.attributes).toMatchObject({ "http.response.status_code": 200, "paykit.attempts": 2, "url.full": `${BASE_URL}/api/v2/status/${testMerchant.endpointId}` })
    // the reconciled sale: its reply was lost, so no status code and no serial number of its own
    const lost = ofOrder("paykit.sale", reconciled.client_orderid)[0]!
    expect(lost.attributes).toMatchObject({ "http.request.method": "POST", "paykit.attempts": 1, "paykit.outcome": "reconciled" })
    expect(lost.attributes["http.response.status_code"]).toBeUndefined()
    expect(lost.attributes["paykit.serial_number"]).toBeUndefined()
    // no query string in any url.full
    for (const span of exporter.getFinishedSpans()) {
      const url = span.attributes["url.full"]
      if (url !== undefined) expect(String(url)).not.toContain("?")
    }
  })

  it("puts no PAN, CVV, control key, private key or full control digest in any span", () => {
    const spans = exporter.getFinishedSpans()
    expect(spans.length).toBeGreaterThan(5)
    expect(sentControls.length).toBeGreaterThan(3)
    const text = JSON.stringify(spans.map((s) => ({
      name: s.name,
      attributes: s.attributes,
      events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
      status: s.status,
      links: s.links.map((l) => l.attributes)
    })))
    const secrets = [PAN, `"${CVV}"`, `=${CVV}`, ` ${CVV}`, CONTROL_KEY, ...PRIVATE_KEY_LINES, ...sentControls, ...sentAuthorizations]
    for (const secret of secrets) expect(text.includes(secret), `a span holds ${secret.slice(0, 6)}…`).toBe(false)
    // a digest cut short is still a digest: no 20+ hex run of any control sent
    for (const control of sentControls) expect(text.includes(control.slice(0, 20))).toBe(false)
  })
})

describe("the README's OTLP wiring", () => {
  it("sends the call spans to an OTLP/HTTP collector, with no secret in the payload", async () => {
    const bodies: Array<string> = []
    const collector = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/v1/traces") bodies.push(body)
        res.writeHead(200, { "Content-Type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`
    try {
      const otlp = ManagedRuntime.make(
        Otlp.layerJson({ baseUrl: url.replace(/\/v1\/traces$/, ""), resource: { serviceName: "my-shop" } }).pipe(Layer.provide(FetchHttpClient.layer))
      )
      const input = saleInput({ cvv2: CVV })
      await otlp.runPromise(Effect.gen(function*() {
        yield* pay.sale(input)
        yield* pay.awaitFinal({ client_orderid: input.client_orderid })
      }).pipe(Effect.withSpan("checkout")))
      await otlp.dispose() // flushes what is still batched
      const payload = bodies.join("\n")
      const spans = bodies.flatMap((b) => JSON.parse(b).resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)))
      const attrs = (span: any) => Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]))
      const checkout = spans.find((x: any) => x.name === "checkout")
      const sale = spans.find((x: any) => x.name === "paykit.sale" && attrs(x)["client_orderid"] === input.client_orderid)
      expect(checkout).toBeDefined()
      expect(sale).toBeDefined()
      expect(sale.parentSpanId).toBe(checkout.spanId)
      expect(attrs(sale)).toMatchObject({ operation: "SALE", outcome: "ok" })
      expect(payload).toContain('"stringValue":"my-shop"')
      for (const secret of [PAN, `"${CVV}"`, CONTROL_KEY, ...PRIVATE_KEY_LINES, ...sentControls]) expect(payload.includes(secret)).toBe(false)
    } finally {
      await new Promise((resolve) => collector.close(resolve))
    }
  })
})
