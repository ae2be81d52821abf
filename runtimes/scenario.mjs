/**
 * The runtime scenario: what every runtime (Node 20/22/24, Bun, Deno, workerd) runs against the
 * BUILT PayKit packages, imported by their published names exactly as a merchant's code would.
 * Plain ESM JavaScript with web-standard APIs only, so the same file runs everywhere; the entry of
 * each runtime (entry.mjs, worker.mjs) supplies what differs: how the vectors are read, how a
 * fetch handler is served.
 *
 *   1. every case of the shared vectors (control.json, oauth.json, callback.json) through
 *      @paykit/signing (vectors.mjs) — the async (WebCrypto) variant of a function when the
 *      package exports one and the entry asks for it (workerd), else the synchronous API;
 *   2. a sale + awaitFinal, then its status, through @paykit/client against a running simulator (`simUrl`, the
 *      `paykit-sim` that the orchestrator started on Node), over this runtime's own fetch;
 *   2b. the same through `@paykit/client/promise` (the Promise facade's own entry, which loads
 *      its engine on the first call), and bad input refused with that entry's own `InputError`;
 *   3. the simulator inside this runtime (`createSimulator` from @paykit/testkit): served as a
 *      fetch handler by the runtime's own server where it has one (Bun.serve, Deno.serve), by
 *      `sim.listen` on Node, in process on workerd; a sale + awaitFinal against it whose server
 *      callback is delivered to the client's `callbackHandler` (a `Request → Response` function):
 *      handled once, a redelivery answered 200 and not handed off again, a forged one 403.
 */
import { createPayClient } from "@paykit/client"
import { createPayClient as createPromiseOnlyClient, InputError as PromiseEntryInputError, isPayClientError } from "@paykit/client/promise"
import { createSimulator, testMerchant } from "@paykit/testkit"
import { check, describe, runVectors, StepError } from "./vectors.mjs"

const merchant = { login: testMerchant.login, controlKey: testMerchant.controlKey, endpointId: testMerchant.endpointId }

const saleInput = (client_orderid, extra = {}) => ({
  client_orderid, order_desc: "runtime check", amount: "10.00", currency: "USD", address1: "1 Main St",
  city: "Springfield", zip_code: "12345", country: "US", phone: "5551234567", email: "john@example.com",
  ipaddress: "127.0.0.1", card_printed_name: "JOHN DOE", credit_card_number: "4111111111111111",
  expire_month: "12", expire_year: "2030", cvv2: "123", redirect_url: "https://shop.example.com/return", ...extra
})

/** A sale and its awaitFinal through @paykit/client; returns the orderid. */
export async function saleAndAwait(pay, label, extra) {
  const client_orderid = `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const ack = await pay.sale(saleInput(client_orderid, extra))
  const orderid = ack["paynet-order-id"]
  check(typeof orderid === "string" && orderid.length > 0, `${label}: sale answered no paynet-order-id`)
  const final = await pay.awaitFinal({ client_orderid, orderid })
  check(final._tag === "Final" && final.status === "approved", `${label}: awaitFinal gave ${JSON.stringify(final)}`)
  return { client_orderid, orderid }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * The simulator in this runtime, with a sale whose callback reaches the client's handler.
 * `serve(fetchHandler) → Promise<{ url, close }>` serves a fetch handler with the runtime's own
 * server; without it the simulator runs in process (`sim.fetch` is the client's fetch) and the
 * callback is handed to the handler in process too.
 */
export async function runSimulatorAndCallback({ serve, listen } = {}) {
  let handler // the client's callback handler, set below once the client exists
  const delivered = [] // each callback Request the simulator sent
  const inProcessCallbacks = async (input, init) => {
    const request = new Request(input, init)
    delivered.push(request.clone())
    return handler(request)
  }
  const sim = createSimulator({ clock: "real", processingDelayMs: 100, ...(serve ? {} : { callbackFetch: inProcessCallbacks }) })
  let server
  try {
    let baseUrl = "http://paykit-sim.local"
    let fetchImpl = sim.fetch
    let callbackUrl = "http://merchant.example/paykit/callback"
    let how = "sim.fetch in process"
    if (serve) {
      // one server: the merchant's callback route in front of the simulator, as a fetch handler
      server = await serve(async (request) => {
        if (new URL(request.url).pathname === "/paykit/callback") {
          delivered.push(request.clone())
          return handler(request)
        }
        return sim.fetch(request)
      })
      baseUrl = server.url.replace(/\/$/, "")
      fetchImpl = undefined
      callbackUrl = `${baseUrl}/paykit/callback`
      how = `sim.fetch served by ${serve.label}`
    } else if (listen) {
      server = await sim.listen({ port: 0, host: "127.0.0.1" })
      baseUrl = server.url
      fetchImpl = undefined
      how = "sim.listen (node:http)"
    }
    const pay = createPayClient({ baseUrl, ...merchant, ...(fetchImpl ? { fetch: fetchImpl } : {}), poll: { fastIntervalMs: 50 } })
    const handed = []
    handler = pay.callbackHandler({ onCallback: (cb) => void handed.push(cb) })
    const { client_orderid, orderid } = await saleAndAwait(pay, "sim-in-runtime", { server_callback_url: callbackUrl })

    // the simulator sends the callback when the sale turns final; wait for its 200
    const deadline = Date.now() + 10_000
    while (!sim.callbackAttempts().some((a) => a.orderid === orderid && a.outcome === 200)) {
      check(Date.now() < deadline, `callback for ${orderid} not answered 200 in 10 s: ${JSON.stringify(sim.callbackAttempts())}`)
      await sleep(20)
    }
    check(handed.length === 1 && handed[0].orderid === orderid && handed[0].client_orderid === client_orderid && handed[0].status === "approved",
      `onCallback saw ${JSON.stringify(handed.map((c) => [c.orderid, c.status]))}`)
    const original = delivered.find((r) => new URL(r.url).searchParams.get("orderid") === orderid)
    check(original !== undefined, "the delivered callback request was not captured")

    // a redelivery of the very same callback: 200, not handed off again
    const again = await handler(new Request(original.url, { method: "GET" }))
    check(again.status === 200, `redelivered callback answered ${again.status}`)
    check(handed.length === 1, `a redelivered callback reached onCallback (${handed.length} calls)`)
    // the same callback with a forged control: 403, not handed off
    const forgedUrl = new URL(original.url)
    forgedUrl.searchParams.set("control", "0".repeat(40))
    const forged = await handler(new Request(forgedUrl, { method: "GET" }))
    check(forged.status === 403, `forged callback answered ${forged.status}`)
    check(handed.length === 1, "a forged callback reached onCallback")
    return { how, orderid, callback: "handled once, redelivery 200 (deduped), forged 403" }
  } finally {
    await server?.close?.()
    await sim.close()
  }
}

/** The whole scenario; returns a report, never throws. */
export async function runScenario({ vectors, keys, simUrl, serve, listen, preferAsync = false, runtime }) {
  const report = { runtime, ok: false, steps: {} }
  const step = async (name, fn) => {
    const started = Date.now()
    try {
      report.steps[name] = { ok: true, ...(await fn()), ms: Date.now() - started }
    } catch (e) {
      report.steps[name] = { ok: false, error: describe(e), ms: Date.now() - started }
      report.firstError ??= `${name}: ${describe(e)}`
    }
  }
  await step("vectors", async () => {
    const result = await runVectors(vectors, keys, { preferAsync })
    if (result.failed > 0) throw new StepError(`${result.failed} of ${result.passed + result.failed} vectors failed (using ${result.used.join(", ")}); first: ${result.failures.join("; ")}`)
    return { passed: result.passed, used: result.used }
  })
  await step("sale", async () => {
    const pay = createPayClient({ baseUrl: simUrl, ...merchant, poll: { fastIntervalMs: 50 } })
    const { client_orderid, orderid } = await saleAndAwait(pay, "sale")
    // and its status, asked afterwards as a separate call
    const status = await pay.status({ client_orderid, orderid })
    check(status.status === "approved", `status of ${orderid} gave ${JSON.stringify(status)}`)
    return { orderid, status: status.status, against: simUrl }
  })
  await step("promise entry", async () => {
    const pay = createPromiseOnlyClient({ baseUrl: simUrl, ...merchant, poll: { fastIntervalMs: 50 } })
    const { client_orderid, orderid } = await saleAndAwait(pay, "promise-entry")
    const status = await pay.status({ client_orderid, orderid })
    check(status.status === "approved", `status of ${orderid} through @paykit/client/promise gave ${JSON.stringify(status)}`)
    // Bad input fails with the entry's own typed error, naming the field.
    const refused = await pay.sale(saleInput(`${client_orderid}-bad`, { amount: "ten" })).then(() => undefined, (e) => e)
    check(refused instanceof PromiseEntryInputError && isPayClientError(refused) && refused.field === "amount", `a sale with amount "ten" through @paykit/client/promise gave ${describe(refused)}`)
    return { orderid, status: status.status }
  })
  await step("simulator+callback", () => runSimulatorAndCallback({ serve, listen }))
  report.ok = Object.values(report.steps).every((s) => s.ok)
  return report
}
