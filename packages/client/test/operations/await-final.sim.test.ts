import { SLOW_CARD_DELAY_MS } from "@paykit/testkit"
import { Effect, Fiber } from "effect"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { saleInput } from "../support/fixtures"
import { setup } from "../support/sim"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

describe("awaitFinal", () => {
  const { sim, pay, service } = setup()
  afterAll(() => sim.close())

  it("waits out the slow card while the simulator clock moves (Promise facade)", async () => {
    const input = saleInput({ credit_card_number: "4000000000000259" })
    await pay.sale(input)
    let done = false
    const waiting = pay.awaitFinal({ client_orderid: input.client_orderid }, { deadlineMs: 10_000 }).finally(() => { done = true })
    expect((await pay.status({ client_orderid: input.client_orderid })).status).toBe("processing")
    for (let i = 0; i < 30 && !done; i++) {
      await sim.clock.advance(SLOW_CARD_DELAY_MS / 10)
      await new Promise((r) => setTimeout(r, 5))
    }
    expect(await waiting).toMatchObject({ _tag: "Final", status: "approved" })
  })

  it("fails with AwaitFinalTimeout at its deadline (Effect API)", async () => {
    const input = saleInput({ credit_card_number: "4000000000000259" })
    await pay.sale(input)
    const exit = await Effect.runPromise(Effect.flip(service.awaitFinal({ client_orderid: input.client_orderid }, { deadlineMs: 30 })))
    expect(exit).toMatchObject({ _tag: "AwaitFinalTimeout", lastStatus: "processing" })
  })

  it("polls fast first, then slower (real simulator clock)", async () => {
    const real = setup({ clock: "real", processingDelayMs: 60 })
    try {
      const input = saleInput()
      await real.pay.sale(input)
      const started = Date.now()
      const fiber = Effect.runFork(real.service.awaitFinal({ client_orderid: input.client_orderid }, { fastIntervalMs: 5, fastPhaseMs: 20, slowIntervalMs: 15, deadlineMs: 2000 }))
      const result = await Effect.runPromise(Fiber.join(fiber))
      expect(result).toMatchObject({ _tag: "Final", status: "approved" })
      expect(Date.now() - started).toBeGreaterThanOrEqual(50)
    } finally {
      await real.sim.close()
    }
  })
})

describe("callbacks from the simulator", () => {
  const deliveries: Array<Request> = []
  let handler: ((req: Request) => Promise<Response>) | undefined
  const { sim, pay } = setup({
    callbackFetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init)
      deliveries.push(req.clone())
      return handler === undefined ? new Response("no", { status: 503 }) : handler(req)
    }) as typeof fetch
  })
  afterAll(() => sim.close())

  it("verified, handed off once, duplicates dropped, forgeries refused, failures retried by the gateway", async () => {
    const handled: Array<string> = []
    let failOnce = true
    handler = pay.callbackHandler({
      onCallback: (cb) => {
        if (failOnce) {
          failOnce = false
          throw new Error("merchant db down")
        }
        handled.push(`${cb.client_orderid}:${cb.status}`)
      }
    })
    const input = saleInput({ server_callback_url: "https://shop.example.com/paykit/callback" })
    await pay.sale(input)
    await pay.awaitFinal({ client_orderid: input.client_orderid })
    // The first delivery fails in user code (500); the gateway retries with backoff.
    for (let i = 0; i < 20 && handled.length === 0; i++) await sim.clock.advance(60_000)
    expect(handled).toEqual([`${input.client_orderid}:approved`])
    const attempts = sim.callbackAttempts().filter((a) => a.client_orderid === input.client_orderid)
    expect(attempts.map((a) => a.outcome)).toEqual([500, 200])
    // Replaying a delivery is a duplicate: 200, no second hand-off.
    const replay = await handler(deliveries.at(-1)!.clone())
    expect(replay.status).toBe(200)
    expect(handled).toHaveLength(1)
    // A forged callback (status flipped) is refused.
    const forged = new URL(deliveries.at(-1)!.url)
    forged.searchParams.set("status", "declined")
    expect((await handler(new Request(forged))).status).toBe(403)
    expect(await pay.verifyCallback(new URL(deliveries.at(-1)!.url))).toMatchObject({ client_orderid: input.client_orderid, status: "approved" })
  })

  it("a delivery lost to a callback-fail fault is retried by the gateway and handled once", async () => {
    const handled: Array<string> = []
    handler = pay.callbackHandler({ onCallback: (cb) => void handled.push(cb.client_orderid) })
    sim.faults.add({ kind: "callback-fail", count: 1 })
    const input = saleInput({ server_callback_url: "https://shop.example.com/paykit/callback" })
    await pay.sale(input)
    await pay.awaitFinal({ client_orderid: input.client_orderid })
    for (let i = 0; i < 20 && handled.length === 0; i++) await sim.clock.advance(60_000)
    sim.faults.clear()
    expect(handled).toEqual([input.client_orderid])
    const attempts = sim.callbackAttempts().filter((a) => a.client_orderid === input.client_orderid)
    expect(attempts.length).toBeGreaterThanOrEqual(2)
    expect(attempts.at(-1)!.outcome).toBe(200)
  })
})
