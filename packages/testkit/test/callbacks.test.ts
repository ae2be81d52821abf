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
    expect(receiver.received.map((r) => [r["type"], r["amount"]])).toEqual([["preauth", "10.00"], ["capture", "4.00"], ["return", "1.00"]])
  })
})
