/**
 * Who may use the test routes and the dashboard (issue 16's loopback rule, issue 18's shared
 * mode): served on loopback; hidden (404) on any other address unless exposed; with an admin token
 * only to `Authorization: Bearer <token>` (403 otherwise); the API and the hosted customer pages
 * are served either way.
 */
import { request as httpRequest } from "node:http"
import { networkInterfaces } from "node:os"
import { afterEach, describe, expect, it } from "vitest"
import { createSimulator, requests, type Simulator, type SimulatorOptions } from "../src/index"
import { isTestRoutePath, testRouteGate, tokenMatches } from "../src/http/edge"
import { signedRequest } from "./helpers"

let sim: Simulator | undefined
afterEach(async () => {
  await sim?.close()
  sim = undefined
})

/**
 * A non-loopback address of this machine to bind to (traffic to it stays on this host); without
 * one, 0.0.0.0 (every interface, reached here through 127.0.0.1): both listen beyond loopback.
 */
const external = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && !i.internal && i.family === "IPv4")?.address
const bindHost = external ?? "0.0.0.0"
const reachHost = external ?? "127.0.0.1"

async function start(options: SimulatorOptions, host: string) {
  sim = createSimulator({ processingDelayMs: 0, ...options })
  const server = await sim.listen({ port: 0, host })
  return `http://${host === "0.0.0.0" ? reachHost : host}:${new URL(server.url).port}`
}

const TEST_ROUTES: Array<[string, string]> = [
  ["GET", "/__sim/clock"],
  ["POST", "/__sim/clock/advance?ms=1"],
  ["POST", "/__sim/reset"],
  ["GET", "/__sim/callbacks"],
  ["GET", "/__sim/orders"],
  ["POST", "/__sim/snapshot"],
  ["GET", "/__sim/ui"],
  ["GET", "/__sim/anything-added-later"]
]

async function statuses(base: string, headers: Record<string, string> = {}) {
  const out: Record<string, number> = {}
  for (const [method, path] of TEST_ROUTES) out[`${method} ${path}`] = (await fetch(`${base}${path}`, { method, headers })).status
  return out
}

async function apiAndPagesWork(base: string) {
  const sale = await signedRequest(sim!, "SALE", requests.sale(), { fetch: (r) => fetch(r), base })
  expect(sale.status).toBe(200)
  // The hosted payment form is a customer page: never behind the gate.
  const form = await signedRequest(sim!, "SALEFORM", requests.saleForm(), { fetch: (r) => fetch(r), base })
  expect(form.status).toBe(200)
  const page = await fetch(`${base}/__sim/form/${form.body["paynet-order-id"]}`)
  expect(page.status).toBe(200)
}

describe("test-route gate", () => {
  it("on loopback the test routes are served", async () => {
    const base = await start({}, "127.0.0.1")
    expect((await fetch(`${base}/__sim/clock`)).status).toBe(200)
    expect((await fetch(`${base}/__sim/reset`, { method: "POST" })).status).toBe(200)
  })

  it(`listening beyond loopback (${bindHost}) they answer 404 while the API and hosted pages work`, async () => {
    const base = await start({}, bindHost)
    const seen = await statuses(base)
    for (const status of Object.values(seen)) expect(status).toBe(404)
    const body = (await (await fetch(`${base}/__sim/reset`, { method: "POST" })).json()) as { error: string }
    expect(body.error).toMatch(/served only when the simulator listens on loopback/)
    await apiAndPagesWork(base)
    // Nothing was reset by the refused calls: the orders are still there.
    expect(sim!.orders().length).toBe(2)
  })

  it("--expose-test-routes serves them beyond loopback", async () => {
    const base = await start({ testRoutes: { expose: true } }, bindHost)
    expect((await fetch(`${base}/__sim/clock`)).status).toBe(200)
  })

  it("with an admin token: 403 without it or with a wrong one, 200 with Bearer <token>, on loopback too", async () => {
    const token = "s3cret-admin-token-for-tests"
    const base = await start({ testRoutes: { adminToken: token } }, "127.0.0.1")
    for (const status of Object.values(await statuses(base))) expect(status).toBe(403)
    for (const status of Object.values(await statuses(base, { authorization: `Bearer ${token}x` }))) expect(status).toBe(403)
    for (const status of Object.values(await statuses(base, { authorization: token }))) expect(status).toBe(403)
    const ok = await statuses(base, { authorization: `Bearer ${token}` })
    expect(ok["GET /__sim/clock"]).toBe(200)
    expect(ok["POST /__sim/reset"]).toBe(200)
    await apiAndPagesWork(base)
  })

  it("gate rules as a function, and the paths it covers", () => {
    expect(testRouteGate(undefined, true, null)).toBeUndefined()
    expect(testRouteGate(undefined, false, null)?.status).toBe(404)
    expect(testRouteGate({ expose: true }, false, null)).toBeUndefined()
    expect(testRouteGate({ adminToken: "abcdefghijklmnop" }, true, null)?.status).toBe(403)
    expect(testRouteGate({ adminToken: "abcdefghijklmnop" }, false, "bearer abcdefghijklmnop")).toBeUndefined()
    expect(testRouteGate({ adminToken: "abcdefghijklmnop" }, false, "Bearer abcdefghijklmno")?.status).toBe(403)
    expect(tokenMatches("a", "a")).toBe(true)
    expect(tokenMatches("", "")).toBe(false)
    expect(isTestRoutePath("/__sim/ui")).toBe(true)
    expect(isTestRoutePath("/__sim/orders/1")).toBe(true)
    expect(isTestRoutePath("/__sim/form/1000001")).toBe(false)
    expect(isTestRoutePath("/__sim/acs/1000001")).toBe(false)
    expect(isTestRoutePath("/api/v2/sale/1001")).toBe(false)
  })
})

/** A raw HTTP request with any Host and Origin (fetch would not send a chosen Host). */
function raw(url: string, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const req = httpRequest({ host: target.hostname, port: target.port, method, path, headers: { "content-length": "0", ...headers } }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (body += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.end()
  })
}

describe("test routes refuse what a web page could send on a developer's behalf", () => {
  it("a POST from another site's page (its Origin) is 403 and changes nothing; the same origin and curl (no Origin) work", async () => {
    const url = await start({}, "127.0.0.1")
    const host = new URL(url).host
    const sale = await signedRequest(sim!, "SALE", requests.sale())
    expect(sale.status).toBe(200)
    const forged = await raw(url, "POST", "/__sim/reset", { origin: "https://evil.example", host })
    expect(forged.status).toBe(403)
    expect(forged.body).toContain("another site")
    expect(sim!.orders()).toHaveLength(1)
    expect((await raw(url, "POST", "/__sim/clock/advance?ms=1", { origin: "null", host })).status).toBe(403)
    expect((await raw(url, "POST", "/__sim/clock/advance?ms=1", { origin: url, host })).status).toBe(200)
    expect((await raw(url, "POST", "/__sim/reset", { host })).status).toBe(200)
    expect(sim!.orders()).toHaveLength(0)
  })

  it("on loopback, a Host that is not loopback (a DNS name rebound to 127.0.0.1) is 403, even for GET", async () => {
    const url = await start({}, "127.0.0.1")
    const port = new URL(url).port
    const rebound = await raw(url, "GET", "/__sim/orders", { host: `rebind.evil.example:${port}` })
    expect(rebound.status).toBe(403)
    expect(rebound.body).toContain("loopback Host")
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      expect((await raw(url, "GET", "/__sim/orders", { host })).status, host).toBe(200)
    }
    // The API itself is not a test route: any Host reaches it.
    expect((await raw(url, "POST", "/api/v2/status/1001", { host: `rebind.evil.example:${port}` })).status).toBe(400)
  })
})
