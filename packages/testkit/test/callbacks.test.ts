import { afterEach, describe, expect, it } from "vitest"
import { CALLBACK_MAX_ATTEMPTS, createSimulator, requests, type Simulator } from "../src/index"
import { callbackReceiver, signedRequest } from "./helpers"

let sim: Simulator
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const CALLBACK = "https://merchant.example/callback?secret-token=abc"

describe("server callbacks", () => {
  it("a final status sends one signed GET with the ServerCallback fields", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const fields = requests.sale({ server_callback_url: CALLBACK, amount: "12.34" })
    const reply = await signedRequest(sim, "SALE", fields)
    await sim.clock.advance(1999)
    expect(receiver.received).toHaveLength(0)
    await sim.clock.advance(1)
    expect(receiver.received).toHaveLength(1)
    expect(receiver.received[0]).toMatchObject({
      status: "approved",
      orderid: String(reply.body["paynet-order-id"]),
      client_orderid: fields.client_orderid,
      merchant_order: fields.client_orderid,
      type: "sale",
      amount: "12.34",
      currency: "USD",
      "secret-token": "abc",
      bin: "411111",
      "last-four-digits": "1111"
    })
    expect(sim.callbackAttempts()).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 200, url: "https://merchant.example/callback", status: "approved" })
    ])
  })

  it("retries with exponential backoff on the simulator clock until a 200", async () => {
    const receiver = callbackReceiver((n) => (n < 4 ? 503 : 200))
    sim = createSimulator({ callbackFetch: receiver.fetch, processingDelayMs: 0 })
    const start = sim.clock.now()
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }))
    await sim.clock.advance(0)
    expect(receiver.attempts()).toBe(1)
    await sim.clock.advance(10_000)
    expect(receiver.attempts()).toBe(2)
    await sim.clock.advance(20_000)
    expect(receiver.attempts()).toBe(3)
    await sim.clock.advance(40_000)
    expect(receiver.attempts()).toBe(4)
    await sim.clock.advance(24 * 3600_000)
    expect(receiver.attempts()).toBe(4)
    const attempts = sim.callbackAttempts()
    expect(attempts.map((a) => a.outcome)).toEqual([503, 503, 503, 200])
    expect(attempts.map((a) => a.at - start)).toEqual([0, 10_000, 30_000, 70_000])
  })

  it("gives up after 30 attempts; an unreachable merchant is logged as error", async () => {
    sim = createSimulator({
      processingDelayMs: 0,
      callbackFetch: (async () => {
        throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) })
      }) as typeof fetch
    })
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }))
    await sim.clock.advance(30 * 24 * 3600_000)
    const attempts = sim.callbackAttempts()
    expect(attempts).toHaveLength(CALLBACK_MAX_ATTEMPTS)
    expect(attempts[0]).toMatchObject({ outcome: "error", error: expect.stringContaining("ECONNREFUSED") })
  })

  it("the callback-fail fault treats the merchant as down", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch, processingDelayMs: 0 })
    sim.faults.add({ kind: "callback-fail", count: 2 })
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }))
    await sim.clock.advance(60_000)
    expect(sim.callbackAttempts().map((a) => a.outcome)).toEqual(["error", "error", 200])
    expect(receiver.received).toHaveLength(1)
  })

  it("a declined payment's callback carries the error", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch, processingDelayMs: 0 })
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK, credit_card_number: "4000000000009995" }))
    await sim.clock.advance(0)
    expect(receiver.received[0]).toMatchObject({ status: "declined", error_code: "51", error_message: "Insufficient funds" })
  })

  it("captures, returns and voids send callbacks of their own type", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch, processingDelayMs: 0 })
    const fields = requests.preauth({ server_callback_url: CALLBACK })
    const reply = await signedRequest(sim, "PREAUTH", fields)
    const orderid = String(reply.body["paynet-order-id"])
    await sim.clock.advance(0)
    await signedRequest(sim, "CAPTURE", { login: "paykit-test", client_orderid: fields.client_orderid, orderid, amount: "4.00", currency: "USD" })
    await sim.clock.advance(0)
    await signedRequest(sim, "RETURN", { login: "paykit-test", client_orderid: fields.client_orderid, orderid, amount: "1.00", currency: "USD" })
    await sim.clock.advance(0)
    expect(receiver.received.map((r) => [r["type"], r["amount"]])).toEqual([["preauth", "10.00"], ["capture", "4.00"], ["reversal", "1.00"]])
  })
  it("two partial returns of equal amount are two distinct callbacks; a redelivery is byte-for-byte the same query", async () => {
    const urls: string[] = []
    let calls = 0
    const fetch = (async (input: RequestInfo | URL) => {
      calls += 1
      urls.push(String(input))
      // The first delivery of the second return fails once: its retry must be the same query.
      return new Response("", { status: calls === 3 ? 503 : 200 })
    }) as typeof globalThis.fetch
    sim = createSimulator({ callbackFetch: fetch, processingDelayMs: 0 })
    const fields = requests.sale({ server_callback_url: CALLBACK, amount: "20.00" })
    const orderid = String((await signedRequest(sim, "SALE", fields)).body["paynet-order-id"])
    await sim.clock.advance(0)
    for (let n = 0; n < 2; n++) {
      await signedRequest(sim, "RETURN", { login: "paykit-test", client_orderid: fields.client_orderid, orderid, amount: "5.00", currency: "USD" })
      await sim.clock.advance(0)
    }
    await sim.clock.advance(10_000)
    expect(urls).toHaveLength(4)
    const [sale, first, second, retry] = urls.map((u) => new URL(u))
    expect(urls[3]).toBe(urls[2])
    expect(urls[1]).not.toBe(urls[2])
    for (const u of [first!, second!]) {
      expect(u.searchParams.get("type")).toBe("reversal")
      expect(u.searchParams.get("amount")).toBe("5.00")
      expect(u.searchParams.get("merchant_order")).toBe(fields.client_orderid)
    }
    const perTx = (u: URL) => [u.searchParams.get("approval-code"), u.searchParams.get("processor-rrn")]
    const codes = [sale!, first!, second!].map(perTx)
    for (const [code, rrn] of codes) {
      expect(code).toMatch(/^[0-9]{6}$/)
      expect(rrn).toMatch(/^[0-9]{12,}$/)
    }
    expect(new Set(codes.map((c) => c[0])).size).toBe(3)
    expect(new Set(codes.map((c) => c[1])).size).toBe(3)
    expect(perTx(retry!)).toEqual(perTx(second!))
    // Never from card data: the PAN's digits do not make the codes.
    expect(codes.flat().join()).not.toContain("1111")
  })

  it("the per-transaction fields are the same after a snapshot and restore (deterministic from state)", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch, processingDelayMs: 0 })
    const fields = requests.sale({ server_callback_url: CALLBACK })
    const orderid = String((await signedRequest(sim, "SALE", fields)).body["paynet-order-id"])
    await sim.clock.advance(0)
    const snapshot = sim.snapshot()
    await sim.close()
    sim = createSimulator({ restore: JSON.parse(JSON.stringify(snapshot)), callbackFetch: receiver.fetch })
    await signedRequest(sim, "RETURN", { login: "paykit-test", client_orderid: fields.client_orderid, orderid, amount: "1.00", currency: "USD" })
    await sim.clock.advance(2000)
    expect(receiver.received.map((r) => r["processor-rrn"])).toEqual([`${orderid.padStart(9, "0")}000`, `${orderid.padStart(9, "0")}001`])
  })
})
