import { generateKeyPairSync } from "node:crypto"
import { inspect } from "node:util"
import { Cause, Effect, Exit, Layer, Logger, LogLevel, Option, Tracer } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { createPayClient, makePayClient, resolveConfig, type PayClientService } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { asyncOk, http500, notFound, refused, reset, statusOk, stubFetch, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// Known secrets fed through every path; none may show up in any captured output.
const CONTROL_KEY = "SECRET-CONTROL-KEY-7f3a9c1e"
const PRIVATE_KEY = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
const PRIVATE_KEY_BODY = PRIVATE_KEY.split("\n")[5]!
const PAN = "4111111111111111"
const PAN2 = "5555555555554444"
const CVV = "8642"
const SECRETS = [CONTROL_KEY, PRIVATE_KEY_BODY, PAN, PAN2, `cvv2=${CVV}`, `"${CVV}"`, `'${CVV}'`, ` ${CVV}`]

const captured: Array<string> = []
const spans: Array<{ name: string; attributes: Record<string, unknown> }> = []
const capture = (label: string, value: unknown) => captured.push(`${label}: ${typeof value === "string" ? value : inspect(value, { depth: 8 })}`)

const tracer = Tracer.make({
  span: (name, parent, context, links, startTime, kind) => {
    const attributes = new Map<string, unknown>()
    const span: Tracer.Span = {
      _tag: "Span", name, spanId: `s${captured.length}`, traceId: "t", parent, context, links, sampled: true, kind,
      status: { _tag: "Started", startTime }, attributes,
      attribute: (k, v) => void attributes.set(k, v),
      event: (n, _t, attrs) => capture("event", { n, attrs }),
      addLinks: () => {},
      end: (_endTime, exit) => {
        spans.push({ name, attributes: Object.fromEntries(attributes) })
        capture("span", { name, attributes: Object.fromEntries(attributes) })
        if (Exit.isFailure(exit)) capture("span-exit", Cause.pretty(exit.cause))
      }
    }
    return span
  },
  context: (f) => f()
})

const logger = Logger.make(({ message, annotations, cause }) => {
  capture("log", { message, annotations: [...annotations] })
  capture("log-cause", Cause.pretty(cause))
})

function service(scripts: Array<Script>): PayClientService {
  const stub = stubFetch(scripts)
  return makePayClient(resolveConfig({
    baseUrl: "http://gw.test", login: "paykit-test", controlKey: CONTROL_KEY, privateKeyPem: PRIVATE_KEY, endpointId: 1001,
    fetch: stub.fetch, timeoutMs: 20, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 }
  }))
}

const observed = Layer.mergeAll(Logger.replace(Logger.defaultLogger, logger), Layer.setTracer(tracer), Logger.minimumLogLevel(LogLevel.All))

async function run(effect: Effect.Effect<unknown, unknown>) {
  const exit = await Effect.runPromiseExit(effect.pipe(Effect.provide(observed)))
  if (Exit.isFailure(exit)) {
    const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
    capture("string", String(error))
    capture("json", JSON.stringify(error))
    capture("inspect", error)
    capture("message", (error as Error).message)
    return error as { _tag: string }
  }
  capture("value", exit.value)
  return exit.value
}

const sale = () => saleInput({ credit_card_number: PAN, cvv2: CVV })

describe("no secret, PAN or CVV in spans, logs or errors", () => {
  it("every path", async () => {
    const tags: Array<string> = []
    const expectTag = async (eff: Effect.Effect<unknown, unknown>, tag: string) => {
      const r = (await run(eff)) as { _tag?: string; type?: string }
      tags.push(r._tag ?? r.type ?? "?")
      expect(r._tag ?? r.type).toBe(tag)
    }
    await expectTag(service([asyncOk()]).sale(sale()), "async-response")
    await expectTag(service([]).sale(saleInput({ credit_card_number: `${PAN}9999`, cvv2: CVV })), "InputError")
    await expectTag(service([]).sale(saleInput({ credit_card_number: PAN, cvv2: `${CVV}x` })), "InputError")
    await expectTag(service([]).sale({ ...sale(), credit_card_number: Number(PAN) } as never), "InputError")
    await expectTag(service([]).payout({ client_orderid: "c", amount: "1", currency: "USD", credit_card_number: 4111111111111111 } as never), "InputError")
    // A gateway that echoes the PAN back in its error message.
    const echo = { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": `card ${PAN} refused`, "error-code": "invalid-card-number" } }
    await expectTag(service([echo]).sale(sale()), "GatewayValidationError")
    await expectTag(service([{ status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": "bad", "error-code": "control-mismatch" } }]).sale(sale()), "AuthenticationError")
    await expectTag(service([http500(), http500()]).status({ client_orderid: "c" }), "GatewayServerError")
    await expectTag(service([reset(), reset()]).getCardInfo({ cardrefid: "r1" }), "TransportError")
    await expectTag(service([{ hang: true }, { hang: true }]).status({ client_orderid: "c" }), "Timeout")
    await expectTag(service([{ status: 200, body: { type: "status-response", "credit_card_number": PAN } }]).status({ client_orderid: "c" }), "DecodeError")
    // An undecodable 200 on a money-moving call is reconciled, never a bare DecodeError.
    await expectTag(service([{ status: 200, body: { type: "async-response", "credit_card_number": PAN } }, http500(), http500()]).sale(sale()), "OutcomeUnknown")
    // Gateway texts echoing a PAN glued to a word, or a CVV next to its field name, are scrubbed.
    const glued = { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": `pan=${PAN}x ccn_${PAN2} cvv2=${CVV} "cvc":"${CVV}"`, "error-code": "invalid-card-number" } }
    await expectTag(service([glued]).sale(sale()), "GatewayValidationError")
    await expectTag(service([{ status: 500, body: { type: "error", "serial-number": "s", "error-message": `card ${PAN} security code ${CVV}`, "error-code": "internal-error" } }, http500()]).status({ client_orderid: "c" }), "GatewayServerError")
    await expectTag(service([reset(), http500(), http500()]).sale(sale()), "OutcomeUnknown")
    await expectTag(service([reset(), statusOk()]).sale(sale()), "reconciled")
    await expectTag(service([http500(), notFound(), asyncOk()]).sale(sale()), "async-response")
    // OAuth paths: HMAC (control key) and RSA (private key), with card data in the body.
    await expectTag(service([asyncOk()]).payout({ client_orderid: "c", amount: "1.00", currency: "USD", credit_card_number: PAN }), "async-response")
    await expectTag(service([asyncOk()]).transfer({ client_orderid: "c", amount: "1.00", currency: "USD", order_desc: "d", ipaddress: "127.0.0.1", redirect_url: "https://x.example", credit_card_number: PAN2, cvv2: CVV, "destination-card-no": PAN }), "async-response")
    await expectTag(service([reset(), statusOk()]).createRecurringPayment({ "client-orderid": "c", order_desc: "d", amount: "1.00", currency: "USD", "credit-card-number": PAN, "card-printed-name": "J D", "expire-month": "12", "expire-year": "2030", cvv2: CVV, country: "US", city: "C", "zip-code": "1", address1: "a", "customer-ip": "127.0.0.1" }), "reconciled")
    // Callbacks: a valid one (via the handler) and a forged one.
    const svc = service([])
    const forged = new Request(`https://shop.example/cb?status=approved&orderid=1&client_orderid=c&merchant_order=c&type=sale&amount=1.00&currency=USD&control=${"0".repeat(40)}&bin=411111`)
    await expectTag(svc.verifyCallback(forged), "CallbackSignatureError")
    const res = await run(svc.callbackHandler({ onCallback: () => Effect.fail(new Error(`db down`)) })(forged))
    expect((res as Response).status).toBe(403)
    // Config objects themselves.
    capture("config", svc.config)
    capture("config-json", JSON.stringify(svc.config))
    capture("facade", createPayClient({ baseUrl: "http://x", login: "l", controlKey: CONTROL_KEY, privateKeyPem: PRIVATE_KEY, endpointId: 1 }))

    const all = captured.join("\n")
    expect(all).toContain("paykit.sale") // the capture works
    expect(all).toContain("client_orderid")
    expect(all).toContain("411111******1111") // the echoed PAN was captured, masked
    expect(all).toContain("paykit: retrying") // logs were captured
    expect(all).toMatch(/outcome: 'reconciled'/) // span attributes were captured
    expect(all).toContain("<redacted>")
    for (const secret of SECRETS) {
      const hits = captured.filter((c) => c.includes(secret))
      expect(hits, `secret ${JSON.stringify(secret)} leaked`).toEqual([])
    }
    expect(tags.length).toBeGreaterThan(15)
  })
})

describe("spans", () => {
  it("every call is a paykit.<method> span with operation, endpoint, client_orderid, attempt, outcome", async () => {
    spans.length = 0
    await run(service([refused(), asyncOk()]).payout({ client_orderid: "span-1", amount: "1.00", currency: "USD", credit_card_number: PAN }))
    await run(service([reset(), statusOk()]).sale(saleInput({ client_orderid: "span-2" })))
    const payout = spans.find((s) => s.name === "paykit.payout")
    expect(payout?.attributes).toMatchObject({ operation: "PAYOUT", endpoint: "1001", client_orderid: "span-1", attempt: 2, outcome: "ok" })
    const sale = spans.find((s) => s.name === "paykit.sale")
    expect(sale?.attributes).toMatchObject({ operation: "SALE", client_orderid: "span-2", attempt: 1, outcome: "reconciled" })
    expect(spans.find((s) => s.name === "paykit.status")?.attributes).toMatchObject({ operation: "STATUS", client_orderid: "span-2", outcome: "ok" })
    expect(spans.some((s) => s.name === "paykit.reconcile")).toBe(true)
  })
})
