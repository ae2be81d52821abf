/**
 * paykit-sim's request log over a real process (issue 16, item 2; issue 18, item 4): one line per
 * request without card data or secrets, `--quiet`, `--shared`, `--rate-limit`, `--body-limit`,
 * `--help`. Readiness by its start-up lines; what it printed is checked once it stopped and its
 * output is all read (test/sim-process.ts), never after a fixed wait.
 */
import { afterAll, describe, expect, it } from "vitest"
import { signControl } from "@paykit/signing"
import { requests, testMerchant } from "../src/index"
import { BIN, TEST_TIMEOUT_MS, killChildren, spawnLines, startSim } from "./sim-process"

const PAN = "4111111111111111"
const CVV = "7391"

afterAll(killChildren)

async function sale(url: string, fields: Record<string, string>) {
  const control = signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
  return fetch(`${url}/api/v2/sale/1001`, {
    method: "POST",
    headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...fields, control }).toString()
  })
}

describe("paykit-sim request log, --quiet, --help, --shared", { timeout: TEST_TIMEOUT_MS }, () => {
  it("prints one line per request without card data, the control or the key", async () => {
    const { url, lines, stop } = await startSim([])
    const fields = requests.sale({ credit_card_number: PAN, cvv2: CVV })
    const control = signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
    expect((await sale(url, fields)).status).toBe(200)
    expect((await fetch(`${url}/__sim/clock`)).status).toBe(200)
    // Everything it printed is read once it has stopped.
    expect(await stop()).toBe(0)
    const log = lines.filter((l) => / client_orderid=/.test(l))
    expect(log).toHaveLength(2)
    expect(log[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z POST SALE client_orderid=${fields.client_orderid} 200 - [0-9.]+ms from 127\\.0\\.0\\.1$`))
    expect(log[1]).toMatch(/ GET \/__sim\/clock client_orderid=- 200 - /)
    const all = lines.join("\n")
    for (const secret of [PAN, CVV, control]) expect(all).not.toContain(secret)
  })

  it("--quiet prints no request lines", async () => {
    const { url, lines, stop } = await startSim(["--quiet"])
    expect((await sale(url, requests.sale())).status).toBe(200)
    // Everything it printed is read once it has stopped.
    expect(await stop()).toBe(0)
    expect(lines.filter((l) => / client_orderid=/.test(l))).toEqual([])
  })

  it("--shared --host 127.0.0.1: a token printed once, test routes 403 without it, every use logged even with --quiet", async () => {
    const { url, lines, stop } = await startSim(["--shared", "--quiet"])
    const tokenLines = lines.filter((l) => l.startsWith("Admin token"))
    expect(tokenLines).toHaveLength(1)
    const token = /: (\S+)$/.exec(tokenLines[0]!)![1]!
    expect(token.length).toBeGreaterThanOrEqual(32)
    expect((await fetch(`${url}/__sim/clock`)).status).toBe(403)
    expect((await fetch(`${url}/__sim/reset`, { method: "POST", headers: { authorization: "Bearer wrong-token-wrong-token" } })).status).toBe(403)
    expect((await fetch(`${url}/__sim/clock`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    expect((await sale(url, requests.sale())).status).toBe(200)
    // Everything it printed is read once it has stopped.
    expect(await stop()).toBe(0)
    const audit = lines.filter((l) => / client_orderid=/.test(l))
    expect(audit.map((l) => l.replace(/^\S+ /, "").replace(/ [0-9.]+ms/, ""))).toEqual([
      "GET /__sim/clock client_orderid=- 403 - from 127.0.0.1",
      "POST /__sim/reset client_orderid=- 403 - from 127.0.0.1",
      "GET /__sim/clock client_orderid=- 200 - from 127.0.0.1"
    ])
    expect(lines.join("\n").split(token).length - 1).toBe(1)
  })

  it("--rate-limit and --body-limit reach the simulator: 429 with Retry-After, 413 before the body", async () => {
    // One token per 10 s, two at once: the third sale within 10 s is refused, however slow the machine.
    const { url, lines, stop } = await startSim(["--rate-limit", "0.1/2", "--body-limit", "2k"])
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
    // Everything it printed is read once it has stopped.
    expect(await stop()).toBe(0)
    expect(lines.filter((l) => / SALE client_orderid=\S+ 429 rate-limited /.test(l))).toHaveLength(1)
    expect(lines.filter((l) => / SALE client_orderid=- 413 request-too-large /.test(l))).toHaveLength(1)
  })

  it("--help documents every flag and every test route; bad flags are one-line errors", async () => {
    const run = async (args: string[]) => {
      const p = spawnLines(BIN, args)
      const code = await p.exited
      return { code, out: p.lines.map((l) => `${l}\n`).join(""), err: p.stderr() }
    }
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
  })
})
