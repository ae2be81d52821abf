/**
 * Request hooks (docs/decisions.md#23-request-hooks): `onRequest` / `onResponse` see every attempt
 * of every call from the one attempt, in order, as a redacted view; a hook that throws or rejects
 * changes nothing; `lastResponseOf(result)` gives the attempts and the gateway's `serial-number`.
 * On the controlled clock (support/test-time.ts): a gateway that answers after 25 ms makes an
 * attempt of exactly 25 ms.
 */
import * as Effect from "effect/Effect"
import { beforeEach, describe, expect, it } from "vitest"
import { createPayClient, lastResponseOf, makePayClient, resolveConfig, type PayClientOptions, type PayRequestView, type PayResponseView } from "../../src/index"
import { merchant, saleInput } from "../support/fixtures"
import { setLastResponse } from "../../src/call/hooks"
import { answer, asyncOk, http500, reset, routedFetch, statusOk, type Script } from "../support/stub"
import { startTestTime, testSleep, useTestTime } from "../support/test-time"

useTestTime()
beforeEach(startTestTime)

const PAN = "4111111111111111"
const CVV = "9731"
const VIEW_FIELDS = ["attempt", "client_orderid", "operation", "path"]
const RESPONSE_FIELDS = [...VIEW_FIELDS, "durationMs", "error", "serialNumber", "status"].sort()

type Seen = { readonly hook: "request"; readonly view: PayRequestView } | { readonly hook: "response"; readonly view: PayResponseView }

/** A gateway that answers each script after `ms` on the controlled clock. */
const after = (ms: number, script: Script): Script => async (req, form) => {
  await testSleep(ms)
  return answer(script, req, form)
}

function options(routes: Parameters<typeof routedFetch>[0], seen: Array<Seen>, extra: Partial<PayClientOptions> = {}) {
  const stub = routedFetch(routes)
  const opts: PayClientOptions = {
    baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch,
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4, jitter: false },
    reconcile: { settleMs: 30, pollIntervalMs: 5 }, timeoutMs: 200,
    onRequest: (view) => void seen.push({ hook: "request", view }),
    onResponse: (view) => void seen.push({ hook: "response", view }),
    ...extra
  }
  return { opts, stub }
}

/** No secret in what the hooks saw, serialized as a logger would. */
function expectRedacted(seen: ReadonlyArray<Seen>, controls: ReadonlyArray<string>): void {
  const text = JSON.stringify(seen)
  for (const secret of [PAN, CVV, merchant.controlKey, ...controls]) expect(text).not.toContain(secret)
  for (const s of seen) {
    expect(Object.keys(s.view).sort()).toEqual(s.hook === "request" ? VIEW_FIELDS : RESPONSE_FIELDS)
  }
}

const controlsOf = (stub: ReturnType<typeof routedFetch>) => stub.sent.flatMap((s) => s.form.get("control") ?? [])

describe("onRequest / onResponse", () => {
  it("see every attempt of a retried read in order, with status, duration and serial number", async () => {
    const seen: Array<Seen> = []
    const { opts, stub } = options({ status: [after(25, http500()), after(25, statusOk())] }, seen)
    const pay = createPayClient(opts)
    const result = await pay.status({ client_orderid: "c-1" })
    expect(result).toMatchObject({ status: "approved", "serial-number": "sn-2" })
    const common = { operation: "STATUS", path: "/api/v2/status/1001", client_orderid: "c-1" }
    expect(seen).toEqual([
      { hook: "request", view: { ...common, attempt: 1 } },
      { hook: "response", view: { ...common, attempt: 1, status: 500, durationMs: 25, serialNumber: "sn-4", error: "GatewayServerError" } },
      { hook: "request", view: { ...common, attempt: 2 } },
      { hook: "response", view: { ...common, attempt: 2, status: 200, durationMs: 25, serialNumber: "sn-2", error: undefined } }
    ])
    expect(lastResponseOf(result)).toEqual({ attempts: 2, serialNumber: "sn-2", httpStatus: 200 })
    expectRedacted(seen, controlsOf(stub))
  })

  it("see a reconciled money call's attempt and the status lookups that prove it, in order, with no card data", async () => {
    const seen: Array<Seen> = []
    const input = saleInput({ cvv2: CVV })
    const { opts, stub } = options({
      sale: [reset()],
      status: [statusOk("approved", { "merchant-order-id": input.client_orderid, amount: "10.00", currency: "USD", "transaction-type": "sale" })]
    }, seen)
    const result = await createPayClient(opts).sale(input)
    expect(result).toMatchObject({ type: "reconciled", reason: "TransportError" })
    expect(seen.slice(0, 2)).toEqual([
      { hook: "request", view: { operation: "SALE", path: "/api/v2/sale/1001", client_orderid: input.client_orderid, attempt: 1 } },
      { hook: "response", view: { operation: "SALE", path: "/api/v2/sale/1001", client_orderid: input.client_orderid, attempt: 1, status: undefined, durationMs: 0, serialNumber: undefined, error: "TransportError" } }
    ])
    const lookups = seen.slice(2)
    expect(lookups.length).toBeGreaterThanOrEqual(2)
    expect(lookups.length).toBe(stub.count("status") * 2)
    lookups.forEach((s, i) => {
      expect(s.hook).toBe(i % 2 === 0 ? "request" : "response")
      expect(s.view).toMatchObject({ operation: "STATUS", client_orderid: input.client_orderid, path: "/api/v2/status/1001" })
    })
    expect(lookups[1]!.view).toMatchObject({ status: 200, serialNumber: "sn-2" })
    // The sale's own reply was lost: one attempt, no serial number of its own.
    expect(lastResponseOf(result)).toEqual({ attempts: 1, serialNumber: undefined, httpStatus: undefined })
    expect(controlsOf(stub).length).toBeGreaterThan(0)
    expectRedacted(seen, controlsOf(stub))
  })

  it("the Effect API reports the same attempts, duration on the fiber's clock", async () => {
    const seen: Array<Seen> = []
    const { opts } = options({ status: [after(10, http500()), after(40, statusOk())] }, seen)
    const result = await Effect.runPromise(makePayClient(resolveConfig(opts)).status({ client_orderid: "c-1" }))
    expect(seen.map((s) => [s.hook, s.view.attempt, (s.view as Partial<PayResponseView>).durationMs])).toEqual([
      ["request", 1, undefined], ["response", 1, 10], ["request", 2, undefined], ["response", 2, 40]
    ])
    expect(lastResponseOf(result)).toEqual({ attempts: 2, serialNumber: "sn-2", httpStatus: 200 })
  })

  it("a hook that throws or rejects does not change the result, on either API", async () => {
    let calls = 0
    const throwing: Partial<PayClientOptions> = {
      onRequest: () => { calls++; throw new Error(`hook saw ${PAN}`) },
      onResponse: () => { calls++; return Promise.reject(new Error("rejected")) }
    }
    const plain = options({ sale: [after(5, { status: 200, body: { type: "async-response", status: "processing", "serial-number": "sn-9", "merchant-order-id": "c-1", "paynet-order-id": "77" } })] }, [])
    const hooked = options({ sale: [after(5, { status: 200, body: { type: "async-response", status: "processing", "serial-number": "sn-9", "merchant-order-id": "c-1", "paynet-order-id": "77" } })] }, [], throwing)
    const input = saleInput()
    const withoutHooks = await createPayClient({ ...plain.opts, onRequest: undefined, onResponse: undefined }).sale(input, { idempotencyKey: "k-1" })
    const withHooks = await createPayClient(hooked.opts).sale(input, { idempotencyKey: "k-1" })
    expect(withHooks).toEqual(withoutHooks)
    expect(hooked.stub.sent).toHaveLength(1)
    expect(calls).toBe(2)
    expect(lastResponseOf(withHooks)).toEqual({ attempts: 1, serialNumber: "sn-9", httpStatus: 200 })

    const effectHooked = options({ status: [http500(), statusOk()] }, [], throwing)
    const read = await Effect.runPromise(makePayClient(resolveConfig(effectHooked.opts)).status({ client_orderid: "c-1" }))
    expect(read).toMatchObject({ status: "approved", "serial-number": "sn-2" })
    expect(effectHooked.stub.count("status")).toBe(2)
    expect(calls).toBe(6)
  })
})

describe("lastResponseOf", () => {
  it("leaves every key, the JSON and a structured clone of the result as the reply made them", async () => {
    const { opts } = options({ sale: [asyncOk({ "serial-number": "sn-7" })] }, [])
    const sale = await createPayClient(opts).sale(saleInput())
    expect(lastResponseOf(sale)).toEqual({ attempts: 1, serialNumber: "sn-7", httpStatus: 200 })
    const keys = ["type", "status", "serial-number", "merchant-order-id", "paynet-order-id", "end-point-id", "idempotencyKey"]
    expect(Reflect.ownKeys(sale).filter((k) => !keys.includes(k as string))).toEqual([])
    expect(Object.getOwnPropertySymbols(sale)).toEqual([])
    expect(JSON.parse(JSON.stringify(sale))).toStrictEqual({ ...sale })
    const clone = structuredClone(sale)
    expect(clone).toStrictEqual({ ...sale })
    expect(lastResponseOf(clone)).toBeUndefined()
    expect(lastResponseOf({ ...sale })).toBeUndefined()
  })

  it("a result recorded twice reads the later record; an object that takes no new property has none", () => {
    const result = { type: "async-response" }
    setLastResponse(result, { attempts: 1, serialNumber: "sn-1", httpStatus: 200 })
    setLastResponse(result, { attempts: 2, serialNumber: "sn-2", httpStatus: 200 })
    expect(lastResponseOf(result)).toEqual({ attempts: 2, serialNumber: "sn-2", httpStatus: 200 })
    const frozen = Object.freeze({ type: "async-response" })
    expect(() => setLastResponse(frozen, { attempts: 1, serialNumber: undefined, httpStatus: 200 })).not.toThrow()
    expect(lastResponseOf(frozen)).toBeUndefined()
    expect(lastResponseOf("text")).toBeUndefined()
    expect(lastResponseOf(null)).toBeUndefined()
  })
})
