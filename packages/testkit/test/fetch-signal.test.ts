/**
 * The in-process `fetch` takes the caller's signal beside the request, as WHATWG
 * `fetch(input, init)` does (docs/decisions.md#20-speed-against-a-careful-hand-written-call): a
 * request aborted before it is handled is never handled; one aborted while it is handled rejects
 * with the signal's reason once the simulator has handled it, and the order shows what it did.
 */
import { afterEach, describe, expect, it } from "vitest"
import { createSimulator, requests, type Simulator } from "../src/index"
import { buildRequest } from "./helpers"

let sim: Simulator | undefined
afterEach(async () => {
  await sim?.close()
  sim = undefined
})

describe("sim.fetch(request, { signal })", () => {
  it("answers as without a signal while the signal has not fired", async () => {
    sim = createSimulator()
    const fields = requests.sale()
    const response = await sim.fetch(buildRequest(sim, "SALE", fields), { signal: new AbortController().signal })
    expect(response.status).toBe(200)
    expect(sim.orderByClientOrderId(fields.client_orderid)).toBeDefined()
  })

  it("rejects a request whose signal fired before it was handled, with the signal's reason, and handles nothing", async () => {
    sim = createSimulator()
    const fields = requests.sale()
    const controller = new AbortController()
    controller.abort()
    const rejected = await sim.fetch(buildRequest(sim, "SALE", fields), { signal: controller.signal }).then(() => undefined, (e: unknown) => e)
    expect(rejected).toBe(controller.signal.reason)
    expect((rejected as DOMException).name).toBe("AbortError")
    expect(sim.orderByClientOrderId(fields.client_orderid)).toBeUndefined()
  })

  it("rejects a request aborted while it is handled once it was handled: the order exists, the caller sees the abort", async () => {
    sim = createSimulator()
    const fields = requests.sale()
    const controller = new AbortController()
    const pending = sim.fetch(buildRequest(sim, "SALE", fields), { signal: controller.signal })
    controller.abort()
    const rejected = await pending.then(() => undefined, (e: unknown) => e)
    expect((rejected as DOMException).name).toBe("AbortError")
    expect(sim.orderByClientOrderId(fields.client_orderid)).toBeDefined()
  })
})
