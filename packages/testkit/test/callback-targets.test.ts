/**
 * Safe callback targets (issue 18, item 2). Refusals are tested with an injected resolver and
 * transport, and every socket connect of the process is watched: no test here sends a packet to a
 * non-loopback address (the only real connections go to a receiver on 127.0.0.1).
 */
import { createServer } from "node:http"
import net from "node:net"
import type { AddressInfo } from "node:net"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { CallbackTargetsError, createSimulator, requests, type CallbackConnection, type Simulator } from "../src/index"
import { CallbackTargets, type ResolvedAddress } from "../src/callbacks/targets"
import { parseIp } from "../src/http/net-address"
import { signedRequest } from "./helpers"

let sim: Simulator | undefined
const connects: string[] = []
beforeEach(() => {
  connects.length = 0
  // Every socket this process opens during a test, by the address it connects to.
  const original = net.Socket.prototype.connect
  vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (this: net.Socket, ...args: unknown[]) {
    // net.connect hands over its normalised arguments as an array: [options, callback].
    const first = (Array.isArray(args[0]) ? args[0][0] : args[0]) as { host?: string; port?: number } | undefined
    const host = typeof first === "object" && first !== null ? first.host : undefined
    // An address given outright, the address a name was looked up to, and where the socket landed.
    if (host !== undefined && net.isIP(host) !== 0) connects.push(`${host}:${first?.port}`)
    this.once("lookup", (_error: unknown, address: string) => connects.push(`${address}:lookup`))
    this.once("connect", () => connects.push(`${this.remoteAddress}:${this.remotePort}`))
    return (original as (...a: unknown[]) => net.Socket).apply(this, args)
  })
})
afterEach(async () => {
  vi.restoreAllMocks()
  await sim?.close()
  sim = undefined
  // Whatever a test did, nothing left this machine.
  for (const target of connects) expect(target).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1):/)
})

const noResolver = async (): Promise<ReadonlyArray<ResolvedAddress>> => {
  throw new Error("no DNS in this test")
}
const policy = (allow: string[] = []) => new CallbackTargets(allow)
const verdict = (allow: string[], url: string, resolve = noResolver) => policy(allow).check(url, resolve)

describe("callbackTargets policy", () => {
  it("loopback is allowed by default, in every spelling the URL parser accepts", async () => {
    for (const url of ["http://127.0.0.1:8080/cb", "http://[::1]/cb", "http://2130706433/cb", "http://0x7f.1/cb", "http://127.1.2.3/cb", "http://[::ffff:127.0.0.1]/cb"]) {
      expect(await verdict([], url), url).toMatchObject({ ok: true })
    }
  })

  it("anything else is refused unless allowed by address, CIDR or host name", async () => {
    expect(await verdict([], "http://10.1.2.3/cb")).toMatchObject({ ok: false, reason: expect.stringMatching(/10\.1\.2\.3 is not loopback and not in callbackTargets/) })
    expect(await verdict(["10.0.0.0/8"], "http://10.1.2.3/cb")).toMatchObject({ ok: true, address: "10.1.2.3" })
    expect(await verdict(["192.0.2.10"], "http://192.0.2.11/cb")).toMatchObject({ ok: false })
    expect(await verdict(["fd00::/8"], "http://[fd12::5]/cb")).toMatchObject({ ok: true })
    const resolve = async () => [{ address: "203.0.113.9", family: 4 as const }]
    expect(await verdict([], "https://hooks.example.com/cb", resolve)).toMatchObject({ ok: false, reason: expect.stringMatching(/^hooks\.example\.com resolves to 203\.0\.113\.9 is not loopback/) })
    expect(await verdict(["hooks.example.com"], "https://hooks.example.com/cb", resolve)).toMatchObject({ ok: true, hostname: "hooks.example.com", address: "203.0.113.9" })
    expect(await verdict(["*.example.com"], "https://a.b.example.com/cb", resolve)).toMatchObject({ ok: true })
    expect(await verdict(["*.example.com"], "https://example.com.evil.test/cb", resolve)).toMatchObject({ ok: false })
    expect(await verdict(["203.0.113.0/24"], "https://hooks.example.com/cb", resolve)).toMatchObject({ ok: true })
    expect(await verdict([], "ftp://127.0.0.1/cb")).toMatchObject({ ok: false, reason: expect.stringMatching(/http and https only/) })
  })

  it("link-local and metadata addresses are refused unless an address or range inside them is named", async () => {
    const wide = ["0.0.0.0/0", "::/0", "100.64.0.0/10", "fd00::/8", "168.63.0.0/16", "metadata.google.internal"]
    const cases: Array<[string, string]> = [
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
      ["http://[::ffff:169.254.169.254]/", "169.254.169.254"],
      ["http://[::ffff:a9fe:a9fe]/", "169.254.169.254"],
      ["http://[64:ff9b::169.254.169.254]/", "169.254.169.254"],
      ["http://[fe80::1]/", "fe80::/10"],
      ["http://100.100.100.200/latest/meta-data/", "100.100.100.200"],
      ["http://[fd00:ec2::254]/latest/meta-data/", "fd00:ec2::254"],
      ["http://168.63.129.16/machine", "168.63.129.16"],
      ["http://0.0.0.0:8080/", "0.0.0.0"],
      ["http://[::]:8080/", "::"]
    ]
    for (const [url, named] of cases) {
      expect(await verdict(wide, url), url).toMatchObject({ ok: false })
      expect(await verdict([named], url), `${url} allowed by ${named}`).toMatchObject({ ok: true })
    }
    expect((await verdict(wide, "http://169.254.169.254/") as { reason: string }).reason).toMatch(/link-local \(cloud metadata/)
    // A name never allows a metadata address, even when the name itself is allowed (DNS rebinding).
    const rebound = async () => [{ address: "169.254.169.254", family: 4 as const }]
    expect(await verdict(["metadata.google.internal", "0.0.0.0/0"], "http://metadata.google.internal/computeMetadata/v1/", rebound)).toMatchObject({ ok: false })
  })

  it("a name resolving to several addresses connects to the first allowed one only", async () => {
    const resolve = async () => [{ address: "169.254.169.254", family: 4 as const }, { address: "127.0.0.1", family: 4 as const }]
    expect(await verdict([], "http://mixed.test/cb", resolve)).toMatchObject({ ok: true, address: "127.0.0.1", hostname: "mixed.test" })
  })

  it("bad entries are refused when the simulator is created, naming the entry", () => {
    expect(() => policy(["10.0.0.0/33"])).toThrow(CallbackTargetsError)
    expect(() => createSimulator({ callbackTargets: ["http://x/"] })).toThrow(/callbackTargets: "http:\/\/x\/" is neither/)
    expect(() => createSimulator({ callbackTargets: ["256.1.1.1"] })).toThrow(CallbackTargetsError)
  })

  it("address parsing: mapped and NAT64 IPv6 carry their IPv4 address", () => {
    expect(parseIp("::ffff:10.0.0.1")).toEqual({ family: 4, value: 0x0a000001n })
    expect(parseIp("64:ff9b::a00:1")).toEqual({ family: 4, value: 0x0a000001n })
    expect(parseIp("1::2::3")).toBeUndefined()
    expect(parseIp("1.2.3")).toBeUndefined()
  })
})

describe("callbacks through the simulator", () => {
  function fakeTransport(status = 200) {
    const calls: CallbackConnection[] = []
    return { calls, transport: async (c: CallbackConnection) => (calls.push(c), status) }
  }

  async function saleWithCallback(url: string) {
    const reply = await signedRequest(sim!, "SALE", requests.sale({ server_callback_url: url }))
    await sim!.clock.advance(0)
    return String(reply.body["paynet-order-id"])
  }

  it("a metadata target is refused: nothing is sent, no retry, the reason shows in /__sim/callbacks", async () => {
    const { calls, transport } = fakeTransport()
    const resolver = vi.fn(noResolver)
    sim = createSimulator({ processingDelayMs: 0, callbackTransport: transport, callbackResolver: resolver })
    const orderid = await saleWithCallback("http://169.254.169.254/latest/meta-data/iam?x=1")
    await sim.clock.advance(30 * 24 * 3600_000)
    expect(calls).toEqual([])
    expect(resolver).not.toHaveBeenCalled()
    const log = (await (await sim.fetch(new Request("http://sim.test/__sim/callbacks"))).json()) as Array<Record<string, unknown>>
    expect(log).toEqual([
      expect.objectContaining({ orderid, attempt: 1, outcome: "error", url: "http://169.254.169.254/latest/meta-data/iam", refused: expect.stringMatching(/^169\.254\.169\.254 is link-local/) })
    ])
  })

  it("a private address is refused by default and delivered to the checked address once allowed", async () => {
    const refused = fakeTransport()
    sim = createSimulator({ processingDelayMs: 0, callbackTransport: refused.transport, callbackResolver: noResolver })
    await saleWithCallback("http://10.20.30.40:9000/cb")
    expect(refused.calls).toEqual([])
    expect(sim.callbackAttempts()[0]?.refused).toMatch(/not loopback and not in callbackTargets/)
    await sim.close()

    const allowed = fakeTransport()
    sim = createSimulator({ processingDelayMs: 0, callbackTransport: allowed.transport, callbackResolver: noResolver, callbackTargets: ["10.0.0.0/8"] })
    await saleWithCallback("http://10.20.30.40:9000/cb")
    expect(allowed.calls).toHaveLength(1)
    expect(allowed.calls[0]).toMatchObject({ address: "10.20.30.40", hostname: "10.20.30.40" })
    expect(allowed.calls[0]!.url).toMatch(/^http:\/\/10\.20\.30\.40:9000\/cb\?status=approved&/)
    expect(sim.callbackAttempts()[0]).toMatchObject({ outcome: 200 })
  })

  it("a name is resolved at every attempt: rebound to a metadata address, the retry is refused", async () => {
    const { calls, transport } = fakeTransport(503)
    const answers = [[{ address: "203.0.113.9", family: 4 as const }], [{ address: "169.254.169.254", family: 4 as const }]]
    const resolver = vi.fn(async () => answers.shift() ?? [])
    sim = createSimulator({ processingDelayMs: 0, callbackTransport: transport, callbackResolver: resolver, callbackTargets: ["hooks.example.com"] })
    await saleWithCallback("https://hooks.example.com/paykit")
    await sim.clock.advance(10_000)
    await sim.clock.advance(24 * 3600_000)
    expect(resolver).toHaveBeenCalledTimes(2)
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({ hostname: "hooks.example.com", address: "203.0.113.9" })
    const attempts = sim.callbackAttempts()
    expect(attempts.map((a) => [a.attempt, a.outcome, a.refused === undefined ? "-" : "refused"])).toEqual([[1, 503, "-"], [2, "error", "refused"]])
  })

  it("a DNS failure is an error that is retried (not a refusal)", async () => {
    const { calls, transport } = fakeTransport()
    sim = createSimulator({ processingDelayMs: 0, callbackTransport: transport, callbackResolver: noResolver, callbackTargets: ["hooks.example.com"] })
    await saleWithCallback("https://hooks.example.com/paykit")
    await sim.clock.advance(10_000)
    expect(calls).toEqual([])
    const attempts = sim.callbackAttempts()
    expect(attempts).toHaveLength(2)
    expect(attempts[0]).toMatchObject({ outcome: "error", error: expect.stringMatching(/DNS: hooks\.example\.com did not resolve/) })
    expect(attempts[0]!.refused).toBeUndefined()
  })

  it("the default transport connects to the checked address with the URL's host name (real receiver on loopback)", async () => {
    const seen: Array<{ host: string | undefined; url: string | undefined; remote: string | undefined }> = []
    const receiver = createServer((req, res) => {
      seen.push({ host: req.headers.host, url: req.url, remote: req.socket.localAddress })
      res.end("ok")
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()))
    const port = (receiver.address() as AddressInfo).port
    try {
      // "merchant.localtest" resolves (by the injected resolver) to 127.0.0.1: the real request goes there.
      sim = createSimulator({ processingDelayMs: 0, callbackResolver: async () => [{ address: "127.0.0.1", family: 4 }], callbackTargets: ["merchant.localtest"] })
      await saleWithCallback(`http://merchant.localtest:${port}/cb?k=v`)
      expect(sim.callbackAttempts()[0]).toMatchObject({ outcome: 200 })
      expect(seen).toHaveLength(1)
      expect(seen[0]!.host).toBe(`merchant.localtest:${port}`)
      expect(seen[0]!.url).toMatch(/^\/cb\?k=v&status=approved&/)
      // And an address URL through the runtime's fetch.
      await saleWithCallback(`http://127.0.0.1:${port}/cb`)
      expect(seen).toHaveLength(2)
      // The socket watch works: it saw both connections land on the receiver.
      expect(connects.filter((c) => c === `127.0.0.1:${port}`).length).toBeGreaterThanOrEqual(2)
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()))
    }
  })

  it("an injected callbackFetch alone is trusted (in-process receiver); with callbackTargets it is checked too", async () => {
    const fetched: string[] = []
    const callbackFetch = (async (input: RequestInfo | URL) => (fetched.push(String(input)), new Response("ok"))) as typeof fetch
    sim = createSimulator({ processingDelayMs: 0, callbackFetch })
    await saleWithCallback("https://merchant.example/cb")
    expect(fetched).toHaveLength(1)
    await sim.close()
    sim = createSimulator({ processingDelayMs: 0, callbackFetch, callbackTargets: [], callbackResolver: noResolver })
    await saleWithCallback("http://169.254.169.254/")
    expect(fetched).toHaveLength(1)
    expect(sim.callbackAttempts()[0]?.refused).toMatch(/link-local/)
  })
})
