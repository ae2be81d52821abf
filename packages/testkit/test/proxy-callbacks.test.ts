/**
 * The checking proxy's callback relay: a simulator (the upstream) sends its callback to the proxy,
 * which relays it to the merchant's receiver unchanged and checks its fields and its control with
 * the keys of a rotation; a forged callback and one missing a field are reported, naming no key.
 * Everything on loopback.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createSimulator, requests, startProxy, testMerchant, type CheckingProxy, type Simulator } from "../src/index"
import { buildRequest } from "./helpers"

const NEW = "9D2B7C41-6E0A-4F58-B3C2-1A7E5D9F0C64"
let sim: Simulator
let upstream: { url: string; close(): Promise<void> }
let receiver: Server
const received: Array<string> = []
let proxy: CheckingProxy

beforeAll(async () => {
  receiver = createServer((req, res) => {
    received.push(req.url ?? "")
    res.writeHead(200, { "content-type": "text/plain" }).end("OK")
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/paykit/callback?shop=1`
  sim = createSimulator({ processingDelayMs: 0 })
  upstream = await sim.listen({ port: 0, host: "127.0.0.1" })
  // A rotation: the merchant's new key first, the one the gateway still signs with second.
  proxy = await startProxy({ upstream: upstream.url, callbackTarget: receiverUrl, callbackKeys: [NEW, testMerchant.controlKey] })
})

afterAll(async () => {
  await proxy.close()
  await upstream.close()
  await sim.close()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
})

describe("the proxy's callback relay", () => {
  it("relays the gateway's callback to the receiver unchanged and finds it as the spec says", async () => {
    const fields = requests.sale({ server_callback_url: `${proxy.url}/__proxy/callback` })
    const reply = await fetch(buildRequest(undefined as never, "SALE", fields, { base: proxy.url }))
    expect(reply.status).toBe(200)
    await sim.clock.advance(1)
    expect(received).toHaveLength(1)
    const url = new URL(received[0]!, "http://receiver")
    expect(url.pathname).toBe("/paykit/callback")
    expect(url.search.startsWith("?shop=1&")).toBe(true)
    expect(url.searchParams.get("client_orderid")).toBe(fields.client_orderid)
    const callback = proxy.exchanges().find((x) => x.operation === "callback")!
    expect(callback).toMatchObject({ status: 200, via: "forwarded", clientOrderId: fields.client_orderid, mismatches: [] })
    expect(sim.callbackAttempts().at(-1)).toMatchObject({ outcome: 200 })
  })

  it("reports a forged control and a missing field, naming no key", async () => {
    const genuine = new URL(received[0]!, "http://receiver").searchParams
    genuine.delete("shop")
    const forged = new URLSearchParams(genuine)
    forged.set("status", "declined")
    await (await fetch(`${proxy.url}/__proxy/callback?${forged}`)).text()
    const control = proxy.exchanges().at(-1)!
    expect(control.mismatches).toEqual([{ side: "request", kind: "rule", field: "control", rule: "SHA-1(status + orderid + client_orderid + key): does not match any of the 2 keys" }])

    const partial = new URLSearchParams(genuine)
    partial.delete("amount")
    await (await fetch(`${proxy.url}/__proxy/callback?${partial}`)).text()
    expect(proxy.exchanges().at(-1)!.mismatches).toEqual([{ side: "request", kind: "missing-field", field: "amount", rule: "is missing" }])

    const shown = JSON.stringify(proxy.exchanges()) + (await (await fetch(`${proxy.url}/__proxy/ui`)).text())
    for (const key of [NEW, testMerchant.controlKey]) expect(shown).not.toContain(key)
  })
})
