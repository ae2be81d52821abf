/**
 * The request log (issue 16, item 2): one record per request, one line each, never card data or
 * secrets; plus the bin's `--quiet`, `--help` and shared mode (issue 18, item 4) over a real process.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { signControl } from "@paykit/signing"
import { createSimulator, formatRequestLine, requests, testMerchant, type RequestRecord } from "../src/index"
import { operationOf, safe } from "../src/request-line"
import { signedRequest } from "./helpers"

const PAN = "4111111111111111"
const CVV = "7391"

describe("request records", () => {
  it("one per request with operation, client_orderid, status, error code and ms; never the body", async () => {
    const records: RequestRecord[] = []
    const sim = createSimulator({ processingDelayMs: 0, onRequest: (r) => records.push(r) })
    const fields = requests.sale({ credit_card_number: PAN, cvv2: CVV })
    await signedRequest(sim, "SALE", fields)
    await signedRequest(sim, "SALE", requests.sale({ client_orderid: "bad-1" }), { controlKey: "wrong" })
    await sim.fetch(new Request("http://sim.test/__sim/clock"))
    expect(records).toHaveLength(3)
    expect(records[0]).toMatchObject({ method: "POST", path: "/api/v2/sale/1001", operation: "SALE", clientOrderId: fields.client_orderid, status: 200 })
    expect(records[0]!.errorCode).toBeUndefined()
    expect(records[1]).toMatchObject({ operation: "SALE", clientOrderId: "bad-1", status: 400, errorCode: "control-mismatch" })
    expect(records[2]).toMatchObject({ operation: "test-route", path: "/__sim/clock", status: 200 })
    const text = JSON.stringify(records) + records.map(formatRequestLine).join("\n")
    for (const secret of [PAN, CVV, testMerchant.controlKey, "cvv2", "credit_card_number"]) expect(text).not.toContain(secret)
    await sim.close()
  })

  it("the line format, and values that could forge or leak", () => {
    const line = formatRequestLine({ at: Date.UTC(2026, 10, 23, 18, 30), method: "POST", path: "/api/v2/sale/1001", operation: "SALE", clientOrderId: "A-1", status: 200, ms: 3.14 })
    expect(line).toBe("2026-11-23T18:30:00.000Z POST SALE client_orderid=A-1 200 - 3.1ms")
    const evil = formatRequestLine({ at: 0, method: "POST", path: "/api/v2/sale/1001", operation: "SALE", clientOrderId: `x\n2026-01-01T00:00:00.000Z POST SALE ${PAN}`, status: 400, errorCode: "invalid-field", ms: 1 })
    expect(evil.split("\n")).toHaveLength(1)
    expect(evil).not.toContain(PAN)
    expect(safe(PAN)).toBe("411111******1111")
    expect(safe("1234567890123")).toBe("1234567890123") // not a card number (fails Luhn): kept
    expect(operationOf("/api/v2/sale/group/2001")).toBe("SALE")
    expect(operationOf("/api/v2/payout/1001")).toBe("PAYOUT")
    expect(operationOf("/__sim/form/1000001")).toBe("page")
    expect(operationOf("/nowhere")).toBe("-")
  })
})

const bin = fileURLToPath(new URL("../bin/paykit-sim.js", import.meta.url))
const children: ChildProcess[] = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM")
})

/** Starts the bin; resolves once it listens, with every stdout line so far (and later ones). */
function start(extra: string[]): Promise<{ url: string; lines: string[]; child: ChildProcess }> {
  const child = spawn(process.execPath, [bin, "--port", "0", "--host", "127.0.0.1", ...extra], { stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  const lines: string[] = []
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line; got ${JSON.stringify(lines)}`)), 20_000)
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line)
      const m = /^PayKit simulator listening on (http:\/\/127\.0\.0\.1:[0-9]+)$/.exec(line)
      if (m !== null) {
        clearTimeout(timer)
        setTimeout(() => resolve({ url: m[1]!, lines, child }), 100)
      }
    })
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${lines.join("\n")}`)))
  })
}

const settle = () => new Promise((r) => setTimeout(r, 150))

async function sale(url: string, fields: Record<string, string>) {
  const control = signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
  return fetch(`${url}/api/v2/sale/1001`, {
    method: "POST",
    headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...fields, control }).toString()
  })
}

describe("paykit-sim request log, --quiet, --help, --shared", () => {
  it("prints one line per request without card data, the control or the key", async () => {
    const { url, lines, child } = await start([])
    const fields = requests.sale({ credit_card_number: PAN, cvv2: CVV })
    const control = signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
    expect((await sale(url, fields)).status).toBe(200)
    expect((await fetch(`${url}/__sim/clock`)).status).toBe(200)
    await settle()
    const log = lines.filter((l) => / client_orderid=/.test(l))
    expect(log).toHaveLength(2)
    expect(log[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z POST SALE client_orderid=${fields.client_orderid} 200 - [0-9.]+ms from 127\\.0\\.0\\.1$`))
    expect(log[1]).toMatch(/ GET \/__sim\/clock client_orderid=- 200 - /)
    const all = lines.join("\n")
    for (const secret of [PAN, CVV, control]) expect(all).not.toContain(secret)
    child.kill("SIGTERM")
  })

  it("--quiet prints no request lines", async () => {
    const { url, lines, child } = await start(["--quiet"])
    expect((await sale(url, requests.sale())).status).toBe(200)
    await settle()
    expect(lines.filter((l) => / client_orderid=/.test(l))).toEqual([])
    child.kill("SIGTERM")
  })

  it("--shared --host 127.0.0.1: a token printed once, test routes 403 without it, every use logged even with --quiet", async () => {
    const { url, lines, child } = await start(["--shared", "--quiet"])
    const tokenLines = lines.filter((l) => l.startsWith("Admin token"))
    expect(tokenLines).toHaveLength(1)
    const token = /: (\S+)$/.exec(tokenLines[0]!)![1]!
    expect(token.length).toBeGreaterThanOrEqual(32)
    expect((await fetch(`${url}/__sim/clock`)).status).toBe(403)
    expect((await fetch(`${url}/__sim/reset`, { method: "POST", headers: { authorization: "Bearer wrong-token-wrong-token" } })).status).toBe(403)
    expect((await fetch(`${url}/__sim/clock`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    expect((await sale(url, requests.sale())).status).toBe(200)
    await settle()
    const audit = lines.filter((l) => / client_orderid=/.test(l))
    expect(audit.map((l) => l.replace(/^\S+ /, "").replace(/ [0-9.]+ms/, ""))).toEqual([
      "GET /__sim/clock client_orderid=- 403 - from 127.0.0.1",
      "POST /__sim/reset client_orderid=- 403 - from 127.0.0.1",
      "GET /__sim/clock client_orderid=- 200 - from 127.0.0.1"
    ])
    expect(lines.join("\n").split(token).length - 1).toBe(1)
    child.kill("SIGTERM")
  })

  it("--rate-limit and --body-limit reach the simulator: 429 with Retry-After, 413 before the body", async () => {
    // One token per 10 s, two at once: the third sale within 10 s is refused, however slow the machine.
    const { url, lines, child } = await start(["--rate-limit", "0.1/2", "--body-limit", "2k"])
    expect((await sale(url, requests.sale())).status).toBe(200)
    expect((await sale(url, requests.sale())).status).toBe(200)
    const limited = await sale(url, requests.sale())
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(((await limited.json()) as Record<string, string>)["error-code"]).toBe("rate-limited")
    const big = await fetch(`${url}/api/v2/sale/1001`, {
      method: "POST",
      headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
      body: `pad=${"x".repeat(4096)}`
    })
    expect(big.status).toBe(413)
    expect(((await big.json()) as Record<string, string>)["error-code"]).toBe("request-too-large")
    await settle()
    expect(lines.filter((l) => / SALE client_orderid=\S+ 429 rate-limited /.test(l))).toHaveLength(1)
    expect(lines.filter((l) => / SALE client_orderid=- 413 request-too-large /.test(l))).toHaveLength(1)
    child.kill("SIGTERM")
  })

  it("--help documents every flag and every test route; bad flags are one-line errors", async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
        children.push(child)
        let out = ""
        let err = ""
        child.stdout!.on("data", (c) => (out += c))
        child.stderr!.on("data", (c) => (err += c))
        child.on("exit", (code) => resolve({ code, out, err }))
      })
    const help = await run(["--help"])
    expect(help.code).toBe(0)
    const flags = ["--port", "--host", "--config", "--state", "--quiet", "--expose-test-routes", "--shared", "--admin-token", "--callback-allow", "--body-limit", "--headers-timeout", "--request-timeout", "--rate-limit", "--help"]
    for (const flag of flags) expect(help.out).toMatch(new RegExp(`^  (-h, )?${flag} `, "m"))
    const routes = ["POST   /__sim/clock/advance?ms=N", "GET    /__sim/clock", "POST   /__sim/reset", "POST   /__sim/faults", "GET    /__sim/orders", "GET    /__sim/orders/{orderid}", "POST   /__sim/orders/{orderid}/chargeback", "GET    /__sim/callbacks", "GET    /__sim/invariants", "POST   /__sim/snapshot", "GET    /__sim/ui"]
    for (const route of routes) expect(help.out).toContain(route)
    for (const [args, message] of [
      [["--rate-limit", "fast"], "--rate-limit must be N or N/BURST"],
      [["--body-limit", "-1"], "--body-limit must be a positive integer"],
      [["--admin-token", "abcdefghijklmnopq"], "--admin-token needs --shared"],
      [["--shared", "--expose-test-routes"], "exclude each other"],
      [["--callback-allow", "http://x/"], "is neither a host name"],
      [["--nope"], "unknown flag --nope"]
    ] as Array<[string[], string]>) {
      const r = await run(["--port", "0", ...args])
      expect(r.code, args.join(" ")).toBe(1)
      expect(r.err.trim().split("\n"), args.join(" ")).toHaveLength(1)
      expect(r.err).toContain(message)
    }
  }, 120_000)
})
