/**
 * An injected `fetch` takes the attempt's signal beside the `Request`, as WHATWG
 * `fetch(input, init)` takes it (docs/decisions.md#20-speed-against-a-careful-hand-written-call):
 * a real `AbortSignal` in `init.signal`, never linked into the `Request`; a timeout or an
 * interruption aborts it.
 */
import { describe, expect, it } from "vitest"
import { makeTransports, type SendResult } from "../../src/transport/fetch"

const request = { operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs: 10_000 }

describe("an injected fetch and its init.signal", () => {
  it("gets the request without a linked signal and a real AbortSignal beside it", async () => {
    const seen: Array<{ request: Request; init: { signal?: AbortSignal } | undefined }> = []
    const { send } = makeTransports("http://gw.test", async (req, init) => {
      seen.push({ request: req, init })
      return new Response("{}", { status: 200 })
    })
    await new Promise<SendResult>((resolve) => send(request, resolve))
    expect(seen).toHaveLength(1)
    expect(seen[0]!.init?.signal).toBeInstanceOf(AbortSignal)
    expect(seen[0]!.init!.signal!.aborted).toBe(false)
    // Nothing links the attempt's signal into the Request: its own signal never fires.
    expect(seen[0]!.request.signal).not.toBe(seen[0]!.init!.signal)
    expect(await seen[0]!.request.text()).toBe("a=1")
  })

  it("a timed-out attempt aborts init.signal; an interrupted one too", async () => {
    const signals: Array<AbortSignal> = []
    const hold = (_req: Request, init?: { signal?: AbortSignal }) => new Promise<Response>((_, reject) => {
      signals.push(init!.signal!)
      init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))
    })
    const { send } = makeTransports("http://gw.test", hold)
    const timedOut = await new Promise<SendResult>((resolve) => send({ ...request, timeoutMs: 10 }, resolve))
    expect(timedOut).toMatchObject({ _tag: "Timeout", timeoutMs: 10 })
    expect(signals[0]!.aborted).toBe(true)
    const interrupt = send(request, () => {})
    expect(signals[1]!.aborted).toBe(false)
    interrupt()
    expect(signals[1]!.aborted).toBe(true)
  })
})
