/**
 * The attempt's plain signal on the global `fetch` path (src/transport/signal.ts): Node's own `fetch`
 * makes its `Request` from the same undici as the global `Request`, so it gets an AttemptSignal,
 * and aborting it (a timeout, an interruption) still aborts the real connection. A replaced global
 * `fetch` (a mock, a polyfill) gets a real `AbortSignal`.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it, vi } from "vitest"
import { AttemptSignal, globalFetchLinksPlainSignals } from "../../src/transport/signal"
import { makeTransports, type SendResult } from "../../src/transport/fetch"

const request = (timeoutMs: number) => ({ operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs })

/** A server that holds every request without answering, and notes when each one's connection closes. */
async function holdingServer(): Promise<{ url: string; received: Array<IncomingMessage>; closed: () => number; server: Server }> {
  const received: Array<IncomingMessage> = []
  let closed = 0
  const server = createServer((req, res) => {
    received.push(req)
    res.on("close", () => closed++)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, received, closed: () => closed, server }
}

let server: Server | undefined
const realSetTimeout = globalThis.setTimeout
/** Polls `done` on the real clock until it holds (the test's own timeout is the hang guard). */
async function realUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => realSetTimeout(r, 5))
}

afterEach(async () => {
  vi.unstubAllGlobals()
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

describe("the global fetch path", () => {
  it("Node's own fetch links a plain signal; a replaced one does not", () => {
    expect(globalFetchLinksPlainSignals()).toBe(true)
    vi.stubGlobal("fetch", (input: string, init?: RequestInit) => Promise.resolve(new Response(String(input) + String(init?.method))))
    expect(globalFetchLinksPlainSignals()).toBe(false)
    vi.unstubAllGlobals()
    expect(globalFetchLinksPlainSignals()).toBe(true)
  })

  it("a timed-out attempt through Node's fetch aborts its connection; the caller gets Timeout at once", async () => {
    const held = await holdingServer()
    server = held.server
    const { send } = makeTransports(held.url, undefined)
    // The attempt's timer on the fake clock, the socket real: the timeout fires once the server
    // holds the request, whatever the machine's speed.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] })
    let result: SendResult | undefined
    send(request(100), (r) => (result = r))
    // (`vi.waitFor` would move the fake clock as it polls: these waits poll on the real one.)
    await realUntil(() => held.received.length === 1)
    await vi.advanceTimersByTimeAsync(99)
    expect(result).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await realUntil(() => result !== undefined)
    vi.useRealTimers()
    expect(result).toMatchObject({ _tag: "Timeout", timeoutMs: 100 })
    expect(held.received).toHaveLength(1)
    expect(held.received[0]!.method).toBe("POST")
    await vi.waitFor(() => expect(held.closed()).toBe(1))
  })

  it("an interrupted attempt through Node's fetch aborts its connection and reports nothing", async () => {
    const held = await holdingServer()
    server = held.server
    const { send } = makeTransports(held.url, undefined)
    let result: SendResult | undefined
    const interrupt = send(request(10_000), (r) => (result = r))
    await vi.waitFor(() => expect(held.received).toHaveLength(1))
    interrupt()
    await vi.waitFor(() => expect(held.closed()).toBe(1))
    expect(result).toBeUndefined()
  })

  it("a replaced global fetch is given a real AbortSignal, which a timeout aborts", async () => {
    const signals: Array<unknown> = []
    vi.stubGlobal("fetch", (_input: string, init: RequestInit) => new Promise((_, reject) => {
      signals.push(init.signal)
      init.signal!.addEventListener("abort", () => reject(init.signal!.reason))
    }))
    const { send } = makeTransports("http://gw.test", undefined)
    const result = await new Promise<SendResult>((resolve) => send(request(20), resolve))
    expect(result).toMatchObject({ _tag: "Timeout" })
    expect(signals).toHaveLength(1)
    expect(signals[0]).toBeInstanceOf(AbortSignal)
    expect(signals[0]).not.toBeInstanceOf(AttemptSignal)
    expect((signals[0] as AbortSignal).aborted).toBe(true)
  })
})
