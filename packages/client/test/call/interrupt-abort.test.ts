/**
 * Interrupting a call aborts the fetch in flight: a money-moving call through its own interruption
 * handler, a read through the transport's canceler. Either way the request's signal fires, so a
 * real connection is released instead of waiting for the gateway's answer.
 */
import { Effect, Exit, Fiber } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { makePayClient, resolveConfig } from "../../src/index"
import { merchant, saleInput } from "../support/fixtures"
import { notFound, routedFetch, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

function hanging(seen: Array<AbortSignal>): Script {
  return (req) => {
    seen.push(req.signal)
    return new Promise<Response>((_, reject) => {
      req.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
    })
  }
}

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  expect(check()).toBe(true)
}

describe("interruption aborts the fetch in flight", () => {
  it("a money-moving call (sale)", async () => {
    const seen: Array<AbortSignal> = []
    const stub = routedFetch({ sale: [hanging(seen)], status: [notFound()] })
    const svc = makePayClient(resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch }))
    const fiber = Effect.runFork(svc.sale(saleInput(), { idempotencyKey: "abort-1" }))
    await waitFor(() => seen.length === 1)
    expect(seen[0]!.aborted).toBe(false)
    const exit = await Effect.runPromise(Fiber.interrupt(fiber))
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(seen[0]!.aborted).toBe(true)
  })

  it("a read (status)", async () => {
    const seen: Array<AbortSignal> = []
    const stub = routedFetch({ status: [hanging(seen)] })
    const svc = makePayClient(resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch }))
    const fiber = Effect.runFork(svc.status({ client_orderid: "c-1" }))
    await waitFor(() => seen.length === 1)
    expect(seen[0]!.aborted).toBe(false)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(seen[0]!.aborted).toBe(true)
  })
})
