import { afterEach, describe, expect, it, vi } from "vitest"
import { createSimulator, requests, type Simulator } from "../src/index"
import { BASE, buildRequest, callbackReceiver, expectError, readReply, signedRequest, statusOf } from "./helpers"

let sim: Simulator
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

/**
 * Wall time under the test's control: vitest's fake timers and Date (docs: vitest `vi.useFakeTimers`);
 * promises stay real, so a request runs and the test moves the time with `advanceTimersByTimeAsync`.
 */
function fakeWallTime(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date"] })
}
afterEach(() => {
  vi.useRealTimers()
})

function isReset(error: unknown): boolean {
  return error instanceof TypeError && error.message === "fetch failed" && (error.cause as { code?: string }).code === "ECONNRESET"
}

describe("faults in process", () => {
  it("http-500 answers ServerErrorResponse internal-error without processing", async () => {
    sim = createSimulator()
    sim.faults.add({ operation: "SALE", kind: "http-500", count: 1 })
    const fields = requests.sale()
    const reply = await signedRequest(sim, "SALE", fields)
    expectError(reply, "internal-error", 500)
    expect(reply.body.type).toBe("error")
    expect(sim.orders()).toHaveLength(0)
    expect((await signedRequest(sim, "SALE", fields)).status).toBe(200)
  })

  it("reset-before rejects like undici and processes nothing", async () => {
    sim = createSimulator()
    sim.faults.add({ operation: "SALE", kind: "reset-before", count: 1 })
    const error = await sim.fetch(buildRequest(sim, "SALE", requests.sale())).catch((e: unknown) => e)
    expect(isReset(error)).toBe(true)
    expect(sim.orders()).toHaveLength(0)
  })

  it("reset-after processes (the charge happened) and loses the reply; a resend gets the same order", async () => {
    sim = createSimulator()
    sim.faults.add({ operation: "SALE", kind: "reset-after", count: 1 })
    const fields = requests.sale()
    const error = await sim.fetch(buildRequest(sim, "SALE", fields)).catch((e: unknown) => e)
    expect(isReset(error)).toBe(true)
    const order = sim.orderByClientOrderId(fields.client_orderid)
    expect(order?.transactions[0]?.type).toBe("sale")
    const again = await signedRequest(sim, "SALE", fields)
    expect(String(again.body["paynet-order-id"])).toBe(order?.orderid)
    expect(sim.orders()).toHaveLength(1)
  })

  it("latency delays the reply by real milliseconds", async () => {
    fakeWallTime()
    sim = createSimulator()
    sim.faults.add({ kind: "latency", latencyMs: 60, count: 1 })
    let answered = false
    const reply = signedRequest(sim, "SALE", requests.sale()).finally(() => (answered = true))
    await vi.advanceTimersByTimeAsync(59)
    expect(answered).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect((await reply).status).toBe(200)
  })

  it("rules apply per operation, with probability and count; clear removes them", async () => {
    sim = createSimulator()
    sim.faults.add({ operation: "STATUS", kind: "http-500" })
    sim.faults.add({ operation: "SALE", kind: "http-500", probability: 0 })
    expect((await signedRequest(sim, "SALE", requests.sale())).status).toBe(200)
    expectError(await signedRequest(sim, "STATUS", { login: "paykit-test", client_orderid: "x" }), "internal-error", 500)
    sim.faults.clear()
    expectError(await signedRequest(sim, "STATUS", { login: "paykit-test", client_orderid: "x" }), "order-not-found")
  })
})

describe("test-only routes", () => {
  const post = (path: string, body?: unknown) =>
    sim.fetch(new Request(`${BASE}${path}`, { method: "POST", ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }) }))
  const get = (path: string) => sim.fetch(new Request(`${BASE}${path}`))

  it("advance, orders, callbacks, faults and reset over HTTP-style requests", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    const fields = requests.sale({ server_callback_url: "https://merchant.example/cb" })
    const sale = await signedRequest(sim, "SALE", fields)
    const orderid = String(sale.body["paynet-order-id"])
    const before = sim.clock.now()
    const advanced = await post("/__sim/clock/advance?ms=2000")
    expect(await advanced.json()).toEqual({ now: before + 2000 })
    const order = await (await get(`/__sim/orders/${orderid}`)).json()
    expect(order).toMatchObject({ orderid, status: "approved", card: { masked: "411111******1111" }, transactions: [{ type: "sale", status: "approved", amount: "10.00" }] })
    expect((await get("/__sim/orders/1")).status).toBe(404)
    const callbacks = await (await get("/__sim/callbacks")).json()
    expect(callbacks).toEqual([expect.objectContaining({ orderid, outcome: 200, attempt: 1 })])

    expect((await post("/__sim/faults", { operation: "STATUS", kind: "http-500", count: 1 })).status).toBe(200)
    expectError(await signedRequest(sim, "STATUS", { login: "paykit-test", client_orderid: fields.client_orderid, orderid }), "internal-error", 500)
    expect((await post("/__sim/faults", { kind: "nonsense" })).status).toBe(400)
    expect((await post("/__sim/faults", { operation: "NOPE", kind: "http-500" })).status).toBe(400)
    expect((await post("/__sim/faults", [{ operation: "SALE", kind: "latency", latencyMs: 1, count: 1 }, { kind: "callback-fail", probability: 0 }])).status).toBe(200)
    expect((await post("/__sim/faults", { clear: true })).status).toBe(200)

    expect((await post("/__sim/reset")).status).toBe(200)
    expect(sim.orders()).toHaveLength(0)
    expect(sim.callbackAttempts()).toHaveLength(0)
    expect(sim.clock.now()).toBe(before + 2000)
  })

  it("reset drops pending finalisation and callbacks", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ callbackFetch: receiver.fetch })
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: "https://merchant.example/cb" }))
    sim.reset()
    await sim.clock.advance(60_000)
    expect(receiver.received).toHaveLength(0)
  })
})

describe("HTTP server", () => {
  it("serves the same API over loopback, with redirect-url on the real origin", async () => {
    sim = createSimulator({ processingDelayMs: 0 })
    const server = await sim.listen({ port: 0 })
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/)
    const send = (request: Request) => fetch(request)
    const fields = requests.sale({ credit_card_number: "4000000000003220" })
    const reply = await signedRequest(sim, "SALE", fields, { base: server.url, fetch: send })
    expect(reply.status).toBe(200)
    expect(String(reply.body["redirect-url"]).startsWith(`${server.url}/__sim/acs/`)).toBe(true)
    // OAuth over HTTP signs the URL as addressed.
    expect((await signedRequest(sim, "PAYOUT", requests.payout(), { base: server.url, fetch: send })).status).toBe(200)
    const acs = await fetch(String(reply.body["redirect-url"]))
    expect(acs.status).toBe(200)
    await server.close()
  })

  it("a hosted form, its 3DS challenge and the final redirect work over a real socket", async () => {
    sim = createSimulator()
    const server = await sim.listen()
    const send = (request: Request) => fetch(request)
    const fields = requests.saleForm()
    const reply = await signedRequest(sim, "SALEFORM", fields, { base: server.url, fetch: send })
    const formUrl = String(reply.body["redirect-url"])
    expect(formUrl.startsWith(`${server.url}/__sim/form/`)).toBe(true)
    expect((await fetch(formUrl)).status).toBe(200)
    const submit = await fetch(formUrl, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ credit_card_number: "4000000000003220", card_printed_name: "A B", expire_month: "12", expire_year: "2099", cvv2: "123" })
    })
    expect(submit.status).toBe(303)
    const acs = submit.headers.get("location")!
    const done = await fetch(acs, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "result=pass" })
    const html = await done.text()
    expect(html).toContain('action="https://merchant.example/return"')
    expect(html).toContain('name="status" value="approved"')
    const orderid = String(reply.body["paynet-order-id"])
    expect(sim.order(orderid)).toMatchObject({ status: "approved", threeDS: "passed" })
    const view = await (await fetch(`${server.url}/__sim/orders/${orderid}`)).json()
    expect(view).toMatchObject({ orderid, status: "approved", card: { masked: "400000******3220" } })
    await server.close()
  })

  it("reset faults destroy the socket over HTTP", async () => {
    sim = createSimulator()
    const server = await sim.listen()
    sim.faults.add({ operation: "SALE", kind: "reset-after", count: 1 })
    const fields = requests.sale()
    const error = await fetch(buildRequest(sim, "SALE", fields, { base: server.url })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TypeError)
    expect(sim.orderByClientOrderId(fields.client_orderid)).toBeDefined()
    const again = await readReply("SALE", await fetch(buildRequest(sim, "SALE", fields, { base: server.url })))
    expect(again.status).toBe(200)
    await server.close()
  })
})

describe("clock", () => {
  it("virtual clock starts at startTime and moves only by advance", async () => {
    sim = createSimulator({ startTime: Date.UTC(2030, 0, 1) })
    expect(sim.clock.now()).toBe(Date.UTC(2030, 0, 1))
    await new Promise((r) => setTimeout(r, 20))
    expect(sim.clock.now()).toBe(Date.UTC(2030, 0, 1))
    await sim.clock.advance(5)
    expect(sim.clock.now()).toBe(Date.UTC(2030, 0, 1) + 5)
  })

  it("real clock follows wall time plus advances and finalises by itself", async () => {
    // The real clock reads Date.now() and looks for due work on a 100 ms interval: both fake here.
    fakeWallTime()
    sim = createSimulator({ clock: "real", processingDelayMs: 50 })
    expect(sim.clock.now()).toBe(Date.now())
    await vi.advanceTimersByTimeAsync(1_000)
    expect(sim.clock.now()).toBe(Date.now())
    await sim.clock.advance(10_000)
    expect(sim.clock.now() - Date.now()).toBe(10_000)
    const fields = requests.sale()
    const sale = await signedRequest(sim, "SALE", fields)
    const orderid = String(sale.body["paynet-order-id"])
    expect(sim.order(orderid)?.status).toBe("processing")
    // Nobody calls advance: the wall time passing (50 ms, then the interval's next look) finalises it.
    await vi.advanceTimersByTimeAsync(300)
    expect(sim.order(orderid)?.status).toBe("approved")
    expect((await statusOf(sim, orderid, fields.client_orderid)).status).toBe("approved")
  })
})
