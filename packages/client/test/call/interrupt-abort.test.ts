/**
 * Interrupting a call aborts the fetch in flight: a money-moving call through its own interruption
 * handler, a read through the transport's canceler. Either way the request's signal fires, so a
 * real connection is released instead of waiting for the gateway's answer. A call the caller runs
 * in an uninterruptible region is not aborted: the interruption waits for its reply.
 */
import { Effect, Exit, Fiber } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import { makePayClient, resolveConfig } from "../../src/index"
import { merchant, saleInput } from "../support/fixtures"
import { answer, asyncOk, notFound, routedFetch, statusOk, type Script } from "../support/stub"
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

/** A script that holds its reply until `release()` is called; its signal is kept in `seen`. */
function held(seen: Array<AbortSignal>, reply: Script) {
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const script: Script = async (req, form) => {
    seen.push(req.signal)
    await released
    return answer(reply, req, form)
  }
  return { script, release: () => release() }
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

  // A call the caller made uninterruptible runs as the caller asked: an interruption waits for it.
  it("a money-moving call in an uninterruptible region keeps its fetch and ends in its reply", async () => {
    const seen: Array<AbortSignal> = []
    const sale = held(seen, asyncOk())
    const stub = routedFetch({ sale: [sale.script], status: [notFound()] })
    const svc = makePayClient(resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch }))
    const input = saleInput()
    const fiber = Effect.runFork(Effect.uninterruptible(svc.sale(input, { idempotencyKey: "keep-1" })))
    await waitFor(() => seen.length === 1)
    const interrupting = Effect.runPromise(Fiber.interrupt(fiber))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen[0]!.aborted).toBe(false)
    sale.release()
    const exit = await interrupting
    // The fiber ends interrupted as its region ends; the call inside it ran to its reply.
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(seen[0]!.aborted).toBe(false)
    // The key holds the reply: the same call again replays it without sending.
    const again = await Effect.runPromise(svc.sale(input, { idempotencyKey: "keep-1" }))
    expect(again["paynet-order-id"]).toBe("123")
    expect(stub.sent.filter((s) => s.op === "sale")).toHaveLength(1)
  })

  it("a read in an uninterruptible region keeps its fetch and ends in its reply", async () => {
    const seen: Array<AbortSignal> = []
    const status = held(seen, statusOk())
    const stub = routedFetch({ status: [status.script] })
    const svc = makePayClient(resolveConfig({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch }))
    const fiber = Effect.runFork(Effect.uninterruptible(svc.status({ client_orderid: "c-1" })))
    await waitFor(() => seen.length === 1)
    const interrupting = Effect.runPromise(Fiber.interrupt(fiber))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen[0]!.aborted).toBe(false)
    status.release()
    const exit = await interrupting
    // The fiber ends interrupted as its region ends; the call inside it ran to its reply.
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(seen[0]!.aborted).toBe(false)
  })
})
