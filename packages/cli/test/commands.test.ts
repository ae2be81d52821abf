/**
 * verify-callback, status and trigger against a real simulator: in process (its fetch handler) and
 * over HTTP (paykit-sim's server on a free port).
 */
import { signControl } from "@paykit/signing"
import { createSimulator, requests, testMerchant, type Simulator } from "@paykit/testkit"
import { createServer } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { paykit, readJson } from "./helpers"

const SIM = "http://paykit-sim.local"
const creds = ["--login", testMerchant.login, "--key", testMerchant.controlKey, "--endpoint-id", String(testMerchant.endpointId)]

/** A port nothing listens on (bound, then released). */
const freePort = () => new Promise<number>((resolve) => {
  const server = createServer().listen(0, "127.0.0.1", () => {
    const port = (server.address() as { port: number }).port
    server.close(() => resolve(port))
  })
})

const fetchOf = (sim: Simulator): typeof fetch => ((input: RequestInfo | URL, init?: RequestInit) => sim.fetch(new Request(input, init))) as typeof fetch

/** Sends a sale to the simulator as a merchant would (control from @paykit/signing). */
async function sale(sim: Simulator, overrides: Record<string, string> = {}) {
  const fields = requests.sale({ server_callback_url: "https://merchant.example/callback", ...overrides })
  const control = signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
  const res = await sim.fetch(new Request(`${SIM}/api/v2/sale/${testMerchant.endpointId}`, {
    method: "POST",
    headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...fields, control })
  }))
  const reply = (await res.json()) as Record<string, string>
  return { client_orderid: fields.client_orderid!, orderid: reply["paynet-order-id"]! }
}

describe("verify-callback", () => {
  const callbacks: Array<string> = []
  let sim: Simulator
  beforeAll(() => {
    sim = createSimulator({
      processingDelayMs: 100,
      callbackFetch: (async (input: RequestInfo | URL) => {
        callbacks.push(String(input))
        return new Response("ok")
      }) as typeof fetch
    })
  })
  afterAll(() => sim.close())

  it("accepts the callback the simulator sent (exit 0) and lists the unsigned claims", async () => {
    const order = await sale(sim)
    await sim.clock.advance(60_000)
    const url = callbacks.find((u) => u.includes(`client_orderid=${order.client_orderid}`))
    expect(url).toBeDefined()
    const ran = await paykit(["verify-callback", url!, "--key", testMerchant.controlKey])
    expect(ran.stderr).toBe("")
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/^callback control: valid/)
    expect(ran.stdout).toMatch(new RegExp(`client_orderid\\s+${order.client_orderid}`))
    expect(ran.stdout).toMatch(/claims the control does not cover[\s\S]*amount/)
    // the query alone works too, and --json
    const json = await paykit(["verify-callback", `?${new URL(url!).search.slice(1)}`, "--key", testMerchant.controlKey, "--json"])
    const x = JSON.parse(json.stdout) as { ok: boolean; control: string; signed: Record<string, string> }
    expect(x).toMatchObject({ ok: true, control: "valid", signed: { status: "approved", orderid: order.orderid, client_orderid: order.client_orderid } })
  })

  it("refuses a tampered status (exit 1) and says why", async () => {
    const url = callbacks[0]!.replace("status=approved", "status=declined")
    const ran = await paykit(["verify-callback", url, "--key", testMerchant.controlKey])
    expect(ran.code).toBe(1)
    expect(ran.stdout).toMatch(/^callback control: INVALID\n  ✗ control mismatch/)
    expect(ran.stderr).toMatch(/^paykit verify-callback: callback not verified: control mismatch/)
  })

  it("refuses a wrong key, a repeated field and a missing signed field", async () => {
    expect((await paykit(["verify-callback", callbacks[0]!, "--key", "another-key"])).code).toBe(1)
    const repeated = await paykit(["verify-callback", `${callbacks[0]!}&status=declined`, "--key", testMerchant.controlKey])
    expect(repeated.code).toBe(1)
    expect(repeated.stderr).toContain("status appears twice")
    const missing = await paykit(["verify-callback", "status=approved&client_orderid=x&control=" + "0".repeat(40), "--key", testMerchant.controlKey])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("orderid is missing (it is signed)")
  })

  it("agrees with the published callback vector", async () => {
    const vectors = readJson<{ cases: Array<{ id: string; values: Record<string, string>; merchant_control_key: string; control: string }> }>("callback.json")
    for (const c of vectors.cases) {
      const query = new URLSearchParams({ ...c.values, control: c.control }).toString()
      const ran = await paykit(["verify-callback", query, "--key", c.merchant_control_key])
      expect(ran.code, c.id).toBe(0)
    }
  })
})

describe("status", () => {
  let sim: Simulator
  beforeAll(() => {
    sim = createSimulator({ processingDelayMs: 100 })
  })
  afterAll(() => sim.close())

  it("prints the order's status from the simulator (exit 0)", async () => {
    const order = await sale(sim, { credit_card_number: "4000000000000002" })
    await sim.clock.advance(1000)
    const ran = await paykit(["status", "--client-orderid", order.client_orderid, "--orderid", order.orderid, "--base-url", SIM, ...creds], { fetch: fetchOf(sim) })
    expect(ran.stderr).toBe("")
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/status\s+declined/)
    expect(ran.stdout).toMatch(/error-message\s+Do not honor/)
    const json = await paykit(["status", "--client-orderid", order.client_orderid, "--base-url", SIM, ...creds, "--json"], { fetch: fetchOf(sim) })
    const x = JSON.parse(json.stdout) as { ok: boolean; httpStatus: number; reply: Record<string, string>; request: { fields: Record<string, string> } }
    expect(x.ok).toBe(true)
    expect(x.httpStatus).toBe(200)
    expect(x.reply["status"]).toBe("declined")
    expect(x.reply["paynet-order-id"]).toBe(order.orderid)
    expect(json.stdout).not.toContain(testMerchant.controlKey)
  })

  it("exits 1 with the gateway's error when the key is wrong", async () => {
    const order = await sale(sim)
    const ran = await paykit(["status", "--client-orderid", order.client_orderid, "--base-url", SIM, "--login", testMerchant.login, "--key", "wrong-key", "--endpoint-id", "1001"], { fetch: fetchOf(sim) })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toMatch(/^paykit status: the gateway refused the status request: HTTP 400, control-mismatch/)
  })

  it("exits 1 naming the host when nothing listens", async () => {
    const port = await freePort()
    const ran = await paykit(["status", "--client-orderid", "x", "--base-url", `http://127.0.0.1:${port}`, ...creds], { fetch: globalThis.fetch })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe(`paykit status: could not reach http://127.0.0.1:${port} (ECONNREFUSED)\n`)
  })

  it("works over HTTP against the simulator's server", async () => {
    const server = await sim.listen({ port: 0, host: "127.0.0.1" })
    try {
      const order = await sale(sim)
      const ran = await paykit(["status", "--client-orderid", order.client_orderid, "--base-url", server.url, ...creds], { fetch: globalThis.fetch })
      expect(ran.code).toBe(0)
      expect(ran.stdout).toMatch(/status\s+(processing|approved)/)
    } finally {
      await server.close()
    }
  })
})

describe("trigger", () => {
  it("fail-callback adds a fault rule: the next callback delivery fails, then the retry lands", async () => {
    const delivered: Array<string> = []
    const sim = createSimulator({ processingDelayMs: 100, callbackFetch: (async (input: RequestInfo | URL) => (delivered.push(String(input)), new Response("ok"))) as typeof fetch })
    try {
      const ran = await paykit(["trigger", "fail-callback", "--operation", "sale", "--base-url", SIM], { fetch: fetchOf(sim) })
      expect(ran.stderr).toBe("")
      expect(ran.code).toBe(0)
      expect(ran.stdout).toMatch(/the next 1 callback delivery of SALE orders will fail/)
      const order = await sale(sim)
      await sim.clock.advance(1000)
      const attempts = sim.callbackAttempts().filter((a) => a.client_orderid === order.client_orderid)
      expect(attempts[0]?.error).toMatch(/simulated: merchant callback endpoint down/)
      expect(delivered).toHaveLength(0)
      await sim.clock.advance(3_600_000)
      expect(delivered.filter((u) => u.includes(order.client_orderid))).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })

  it("decline-next makes the simulator decline the next matching payment, whatever the card", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    try {
      const ran = await paykit(["trigger", "decline-next", "--operation", "sale", "--base-url", SIM, "--json"], { fetch: fetchOf(sim) })
      expect(ran.stderr).toBe("")
      expect(ran.code).toBe(0)
      expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true, trigger: "decline-next", rule: { operation: "SALE", count: 1 }, pending: 1 })
      const declined = await sale(sim)
      const next = await sale(sim)
      await sim.clock.advance(1)
      expect(sim.order(declined.orderid)?.status).toBe("declined")
      expect(sim.order(next.orderid)?.status).toBe("approved")
      const text = await paykit(["trigger", "decline-next", "--count", "2", "--base-url", SIM], { fetch: fetchOf(sim) })
      expect(text.stdout).toBe("the next 2 payments will be declined (Do not honor, code 05) whatever the card\n")
    } finally {
      await sim.close()
    }
  })

  it("decline-next says why the simulator refuses (an operation that is no payment, an unknown merchant)", async () => {
    const sim = createSimulator()
    try {
      const op = await paykit(["trigger", "decline-next", "--operation", "VOID", "--base-url", SIM], { fetch: fetchOf(sim) })
      expect(op.code).toBe(1)
      // The declinable operations, in the spec's order (x-paykit-declinable).
      expect(op.stderr).toMatch(/refused decline-next: HTTP 400 operation: must be one of (?=[A-Z_, ]*\bSALE\b)(?=[A-Z_, ]*\bPREAUTH\b)/)
      const who = await paykit(["trigger", "decline-next", "--merchant", "nobody", "--base-url", SIM], { fetch: fetchOf(sim) })
      expect(who.code).toBe(1)
      expect(who.stderr).toMatch(/merchant: not the login of a merchant/)
      const bad = await paykit(["trigger", "decline-next", "--count", "0"])
      expect(bad.code).toBe(2)
    } finally {
      await sim.close()
    }
  })

  it("chargeback charges a settled order back through the simulator's route, and says why it refuses an unsettled one", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    try {
      const order = await sale(sim)
      const early = await paykit(["trigger", "chargeback", "--orderid", order.orderid, "--base-url", SIM], { fetch: fetchOf(sim) })
      expect(early.code).toBe(1)
      expect(early.stderr).toMatch(/refused the chargeback of order \d+: HTTP 409 chargeback-not-allowed/)
      await sim.clock.advance(25 * 60 * 60 * 1000)
      const ran = await paykit(["trigger", "chargeback", "--orderid", order.orderid, "--amount", "4.00", "--base-url", SIM, "--json"], { fetch: fetchOf(sim) })
      expect(ran.stderr).toBe("")
      expect(ran.code).toBe(0)
      expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true, trigger: "chargeback", orderid: order.orderid, amount: "4.00" })
      expect(sim.order(order.orderid)?.chargedBack).toBe("4.00")
    } finally {
      await sim.close()
    }
  })

  it("chargeback needs --orderid", async () => {
    const ran = await paykit(["trigger", "chargeback"])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toMatch(/--orderid: chargeback needs the order/)
  })

  it("says when the URL is no simulator", async () => {
    const notSim = (async () => new Response("not found", { status: 404 })) as unknown as typeof fetch
    const ran = await paykit(["trigger", "fail-callback", "--base-url", "https://gateway.example"], { fetch: notSim })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain("has no POST /__sim/faults (HTTP 404)")
  })
})
