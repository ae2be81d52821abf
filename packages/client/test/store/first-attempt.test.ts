/**
 * A store-backed Promise client's first attempt without a fiber (src/call/pipeline.ts: firstPromise over the store ledger), on
 * the memory store and on PGlite. The intent must be in the store when the request leaves, the
 * outcome before the call resolves; the store service's own Effects are not run on the happy path
 * (a test counts them, so it fails if the call took the Effect pipeline); any other answer of the
 * store or the gateway goes on exactly as the pipeline's: send counts are exact, keys replay across
 * instances, a failed store write leaves nothing half done.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, type PayClientOptions } from "../../src/index"
import { openMemoryStore, type PayStoreHandle } from "../../src/store/index"
import { memoryBackend } from "../../src/store/memory"
import { openPgliteStore } from "../../src/store/pglite"
import { makePayStore, type PayStoreService } from "../../src/store/service"
import type { Intent } from "../../src/store/types"
import { merchant, saleInput } from "../support/fixtures"
import { asyncOk, http500, notFound, reset, routedFetch, statusOk, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const retry = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4, jitter: true }
const client = (store: PayStoreService, fetch: (req: Request) => Promise<Response>, extra: Partial<PayClientOptions> = {}) =>
  createPayClient({
    baseUrl: "http://gw.test", ...merchant, fetch, store, retry, reconcile: { settleMs: 30, pollIntervalMs: 5 }, timeoutMs: 500, ...extra
  })
const find = (store: PayStoreService, key: string) => Effect.runPromise(store.findByKey(key))
const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a rejection") }, (e: unknown) => e as { _tag: string } & Record<string, unknown>)
const saleStatus = statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale" })

/** Counts calls of the service's Effect methods (the Effect pipeline's way to the store). */
function counted(store: PayStoreService) {
  const calls: Array<string> = []
  const target = store as unknown as Record<string, unknown>
  for (const method of ["recordIntent", "recordOutcome", "findByKey"] as const) {
    const original = store[method] as (...args: Array<unknown>) => unknown
    target[method] = (...args: Array<unknown>) => {
      calls.push(method)
      return original(...args)
    }
  }
  return calls
}

const stores = [
  ["memory", () => openMemoryStore()],
  ["pglite", () => openPgliteStore()]
] as const

describe.each(stores)("a store-backed client's first attempt (%s store)", (_name, open) => {
  let store: PayStoreHandle
  beforeAll(async () => {
    store = await open()
  }, 300_000)
  afterAll(() => store.close())

  it("records the intent before the send and the outcome before the call resolves, without the service's Effects", async () => {
    const own = await open()
    try {
      const effects = counted(own)
      let atSend: Intent | undefined
      const stub = routedFetch({
        sale: [async (_req, form) => {
          atSend = await find(own, "fa-1")
          expect(form.get("client_orderid")).toBe(atSend?.client_orderid)
          return new Response(JSON.stringify(asyncOk().body), { status: 200 })
        }]
      })
      const input = saleInput()
      const result = await client(own, stub.fetch).sale(input, { idempotencyKey: "fa-1" })
      expect(result).toMatchObject({ type: "async-response", idempotencyKey: "fa-1" })
      expect(atSend).toMatchObject({ operation: "SALE", client_orderid: input.client_orderid, amount: "10.00", currency: "USD", attempts: 1 })
      expect(atSend?.outcome).toBeUndefined()
      const after = await find(own, "fa-1")
      expect(after?.outcome).toMatchObject({ _tag: "Returned", status: "processing", orderid: "123" })
      expect(JSON.stringify(after)).not.toContain("4111111111111111")
      // Only the test's own look-ups: the call itself ran none of the service's Effects.
      expect(effects.filter((m) => m !== "findByKey")).toEqual([])
      expect(stub.count("sale")).toBe(1)
    } finally {
      await own.close()
    }
  }, 300_000)

  it("a key that succeeded on one instance replays on another without sending", async () => {
    const a = routedFetch({ sale: [asyncOk()] })
    const b = routedFetch({ sale: [asyncOk()] })
    const input = saleInput()
    const first = await client(store, a.fetch).sale(input, { idempotencyKey: "fa-replay" })
    const again = await client(store, b.fetch).sale(input, { idempotencyKey: "fa-replay" })
    expect(again).toEqual(first)
    expect(b.count("sale")).toBe(0)
    expect(await rejection(client(store, b.fetch).sale({ ...input, amount: "11.00" }, { idempotencyKey: "fa-replay" })))
      .toMatchObject({ _tag: "InputError", field: "idempotencyKey" })
    expect(b.count("sale")).toBe(0)
  })

  it("a reset after the gateway processed the sale reconciles with one send, and the store keeps that outcome", async () => {
    const stub = routedFetch({ sale: [reset(), asyncOk()], status: [saleStatus] })
    const input = saleInput()
    const result = await client(store, stub.fetch).sale(input, { idempotencyKey: "fa-reset" })
    expect(result).toMatchObject({ type: "reconciled", reason: "TransportError", status: "approved" })
    expect(stub.count("sale")).toBe(1)
    expect((await find(store, "fa-reset"))?.outcome).toMatchObject({ _tag: "Returned", status: "approved" })
    // Another instance replays it.
    const other = routedFetch({ sale: [asyncOk()] })
    expect(await client(store, other.fetch).sale(input, { idempotencyKey: "fa-reset" })).toEqual(result)
    expect(other.count("sale")).toBe(0)
  })

  it("a 500 on the first send is proven not applied and sent again under the same intent", async () => {
    const stub = routedFetch({ sale: [http500(), asyncOk()], status: [notFound()] })
    const result = await client(store, stub.fetch).sale(saleInput(), { idempotencyKey: "fa-500" })
    expect(result).toMatchObject({ type: "async-response", idempotencyKey: "fa-500" })
    expect(stub.count("sale")).toBe(2)
    expect(stub.count("status")).toBe(1)
    expect(await find(store, "fa-500")).toMatchObject({ attempts: 1, outcome: { _tag: "Returned", status: "processing" } })
  })

  it("a refusal is recorded as Failed; the same key re-opens the intent and sends", async () => {
    const refused = { status: 400, body: { type: "validation-error", "serial-number": "s", "error-message": "Card declined", "error-code": "card-declined" } }
    const stub = routedFetch({ sale: [refused, asyncOk()] })
    const pay = client(store, stub.fetch)
    const input = saleInput()
    expect(await rejection(pay.sale(input, { idempotencyKey: "fa-refused" }))).toMatchObject({ _tag: "GatewayValidationError", idempotencyKey: "fa-refused" })
    expect((await find(store, "fa-refused"))?.outcome).toMatchObject({ _tag: "Failed", errorTag: "GatewayValidationError" })
    expect(await pay.sale(input, { idempotencyKey: "fa-refused" })).toMatchObject({ type: "async-response", idempotencyKey: "fa-refused" })
    expect(await find(store, "fa-refused")).toMatchObject({ attempts: 2, outcome: { _tag: "Returned" } })
    expect(stub.count("sale")).toBe(2)
  })

  it("a key another instance holds is waited for, not sent: its outcome is replayed", async () => {
    const slow: Script = () => new Promise((r) => setTimeout(() => r(new Response(JSON.stringify(asyncOk().body), { status: 200 })), 60))
    const a = routedFetch({ sale: [slow] })
    const b = routedFetch({ sale: [asyncOk()] })
    const input = saleInput()
    const first = client(store, a.fetch).sale(input, { idempotencyKey: "fa-held" })
    await new Promise((r) => setTimeout(r, 20))
    const second = await client(store, b.fetch).sale(input, { idempotencyKey: "fa-held" })
    expect(second).toEqual(await first)
    expect(b.count("sale")).toBe(0)
  })

  it("identical keyless sales on one instance share one send", async () => {
    const slow: Script = () => new Promise((r) => setTimeout(() => r(new Response(JSON.stringify(asyncOk().body), { status: 200 })), 30))
    const stub = routedFetch({ sale: [slow] })
    const pay = client(store, stub.fetch)
    const input = saleInput()
    const [x, y] = await Promise.all([pay.sale(input), pay.sale(input)])
    expect(y).toEqual(x)
    expect(stub.count("sale")).toBe(1)
  })
})

describe("a store write that fails", () => {
  it("the intent not recorded: the call fails with StoreError under its key, sends nothing, and the key is free again", async () => {
    let broken = true
    const backend = memoryBackend()
    const store = makePayStore({
      ...backend,
      recordIntent: (...args) => (broken ? Promise.reject(new Error("disk full")) : backend.recordIntent(...args))
    })
    const stub = routedFetch({ sale: [asyncOk()] })
    const pay = client(store, stub.fetch)
    const input = saleInput()
    expect(await rejection(pay.sale(input, { idempotencyKey: "fa-broken" }))).toMatchObject({ _tag: "StoreError", method: "recordIntent", idempotencyKey: "fa-broken" })
    expect(stub.count("sale")).toBe(0)
    broken = false
    expect(await pay.sale(input, { idempotencyKey: "fa-broken" })).toMatchObject({ type: "async-response", idempotencyKey: "fa-broken" })
    expect(stub.count("sale")).toBe(1)
  })

  it("the outcome not recorded: the call still returns its reply, and the intent stays unfinished for recover()", async () => {
    const backend = memoryBackend()
    const store = makePayStore({ ...backend, writeOutcome: () => Promise.reject(new Error("connection lost")) })
    const stub = routedFetch({ sale: [asyncOk()], status: [saleStatus] })
    const pay = client(store, stub.fetch, { intentLeaseMs: 1, deadlineMs: 1000 })
    expect(await pay.sale(saleInput(), { idempotencyKey: "fa-lost" })).toMatchObject({ type: "async-response", idempotencyKey: "fa-lost" })
    expect((await find(store, "fa-lost"))?.outcome).toBeUndefined()
    // The call's lease covers its deadline plus its processing window, whatever intentLeaseMs says.
    expect(await pay.recover({ olderThanMs: 0, settleMs: 0 })).toMatchObject({ claimed: 0 })
    await new Promise((r) => setTimeout(r, 1000 + 30))
    expect(await pay.recover({ olderThanMs: 0, settleMs: 0 })).toMatchObject({ claimed: 1, applied: 1 })
    expect((await find(store, "fa-lost"))?.outcome).toMatchObject({ _tag: "Returned", status: "approved" })
  })

  it("a service object made elsewhere (a copy of the store's) runs its own Effects, with the same guarantees", async () => {
    const store = await openMemoryStore()
    const copy: PayStoreService = { ...store }
    const effects = counted(copy)
    let atSend: Intent | undefined
    const stub = routedFetch({
      sale: [async () => {
        atSend = await find(store, "fa-copy")
        return new Response(JSON.stringify(asyncOk().body), { status: 200 })
      }]
    })
    expect(await client(copy, stub.fetch).sale(saleInput(), { idempotencyKey: "fa-copy" })).toMatchObject({ idempotencyKey: "fa-copy" })
    expect(atSend?.outcome).toBeUndefined()
    expect((await find(store, "fa-copy"))?.outcome).toMatchObject({ _tag: "Returned" })
    expect(effects).toEqual(["recordIntent", "recordOutcome"])
    await store.close()
  })
})
