/**
 * `paykit explain` shows each field's part of the digest (C6 sale) and each parameter of the
 * OAuth base string (RSA payout-check), never the key; and what it signs, the simulator accepts.
 */
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { paykit } from "./helpers"

const KEY = "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"
const published = ["SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com", "--endpoint-id", "1111", "--key", KEY]

describe("explain a C6 sale", () => {
  it("lists each field with its value given and as it enters the digest, then the control", async () => {
    const ran = await paykit(["explain", ...published])
    expect(ran.code).toBe(0)
    const lines = ran.stdout.split("\n")
    expect(lines[0]).toContain("control C6")
    const row = (field: string) => lines.find((l) => new RegExp(`^\\s+\\d+\\s+${field}\\s`).test(l)) ?? ""
    expect(row("endpointId")).toMatch(/endpointId\s+1111\s+1111\s/)
    expect(row("client_orderid")).toMatch(/client_orderid\s+902B4FF5\s+902B4FF5/)
    // the amount as sent, and in minor units (cents) as it enters the digest
    expect(row("amount")).toMatch(/amount\s+10\.42\s+1042\s+minor units \(cents: 10\.42 USD → 1042\)/)
    expect(row("email")).toMatch(/email\s+john\.smith@gmail\.com\s+john\.smith@gmail\.com/)
    // fields in the scheme's order, the key last and hidden
    const order = ["endpointId", "client_orderid", "amount", "email"].map((f) => lines.indexOf(row(f)))
    expect(order).toEqual([...order].sort((a, b) => a - b))
    expect(ran.stdout).toMatch(/\(control key\)\s+\(not shown\)/)
    expect(ran.stdout).toContain("digest input without the key: 1111902B4FF51042john.smith@gmail.com")
    expect(ran.stdout).toContain("control: c6bdd88a78834ef4b863b088827a459f039e8257")
    expect(ran.stdout).not.toContain(KEY)
  })

  it("--json gives the same parts as data", async () => {
    const ran = await paykit(["explain", ...published, "--json"])
    const x = JSON.parse(ran.stdout) as { code: string; parts: Array<{ field: string; given: string; inDigest: string }>; control: string; minorUnits: string }
    expect(x.code).toBe("C6")
    expect(x.minorUnits).toBe("cents")
    expect(x.parts.map((p) => [p.field, p.given, p.inDigest])).toEqual([
      ["endpointId", "1111", "1111"],
      ["client_orderid", "902B4FF5", "902B4FF5"],
      ["amount", "10.42", "1042"],
      ["email", "john.smith@gmail.com", "john.smith@gmail.com"]
    ])
    expect(x.control).toBe("c6bdd88a78834ef4b863b088827a459f039e8257")
    expect(ran.stdout).not.toContain(KEY)
  })

  it("shows the amount in the mode asked: iso4217 for JPY", async () => {
    const ran = await paykit(["explain", "SALE", "client_orderid=o", "amount=1000", "currency=JPY", "email=", "--endpoint-id", "1", "--key", KEY, "--minor-units", "iso4217", "--json"])
    const x = JSON.parse(ran.stdout) as { parts: Array<{ field: string; inDigest: string }> }
    expect(x.parts.find((p) => p.field === "amount")?.inDigest).toBe("1000")
  })

  it("marks an absent optional field (C7 without orderid) as adding nothing", async () => {
    const ran = await paykit(["explain", "STATUS", "login=m", "client_orderid=o-1", "--key", KEY])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/orderid\s+\(not given\)\s+""\s+not given: adds nothing/)
  })

  it("quotes values with invisible differences (NFD accents, spaces)", async () => {
    const ran = await paykit(["explain", "ACCOUNT_VERIFICATION", "client_orderid=a b", `email=jose\u0301@example.com`, "--endpoint-id", "1", "--key", KEY])
    expect(ran.stdout).toContain('"a b"')
    expect(ran.stdout).toContain("jose\\u0301@example.com")
  })
})

describe("explain an RSA payout (PAYOUT_V4_CHECK)", () => {
  const dir = mkdtempSync(join(tmpdir(), "paykit-cli-"))
  const keyFile = join(dir, "merchant.key.pem")
  writeFileSync(keyFile, testMerchant.privateKeyPem, { mode: 0o600 })
  const body = requests.payoutCheck({ client_orderid: "cli-payout-1", amount: "75.00", currency: "EUR" })
  const args = [
    "PAYOUT_V4_CHECK",
    ...Object.entries(body).map(([n, v]) => `${n}=${v}`),
    "--login", testMerchant.login,
    "--private-key", keyFile,
    "--base-url", "http://paykit-sim.local",
    "--endpoint-id", String(testMerchant.endpointId)
  ]

  it("lists every parameter of the base string, sorted, and the base string itself", async () => {
    const ran = await paykit(["explain", ...args, "--nonce", "fixed-nonce", "--timestamp", "1715446963"])
    expect(ran.code).toBe(0)
    const out = ran.stdout
    expect(out).toContain("PAYOUT_V4_CHECK: OAuth 1.0a RSA-SHA256")
    expect(out).toContain("base string URI:  http://paykit-sim.local/api/v4/payout-check/1001")
    // each body field and each protocol parameter, with its encoded form
    expect(out).toMatch(/body\s+amount\s+75\.00\s+amount=75\.00/)
    expect(out).toMatch(/body\s+client_orderid\s+cli-payout-1\s+client_orderid=cli-payout-1/)
    expect(out).toMatch(/oauth\s+oauth_consumer_key\s+paykit-test\s+oauth_consumer_key=paykit-test/)
    expect(out).toMatch(/oauth\s+oauth_nonce\s+fixed-nonce/)
    expect(out).toMatch(/oauth\s+oauth_signature_method\s+RSA-SHA256/)
    expect(out).toMatch(/oauth\s+oauth_timestamp\s+1715446963/)
    const names = [...out.matchAll(/^\s+(?:body|query|oauth)\s+(\S+)/gm)].map((m) => m[1]!)
    expect(names.length).toBe(Object.keys(body).length + 5)
    expect(names).toEqual([...names].sort())
    expect(out).toMatch(/^base string: POST&http%3A%2F%2Fpaykit-sim\.local%2Fapi%2Fv4%2Fpayout-check%2F1001&amount%3D75\.00%26/m)
    expect(out).toMatch(/private key .*merchant\.key\.pem \(2048 bits, not shown\)/)
    expect(out).not.toContain("PRIVATE KEY")
  })

  it("masks a card number in the base string unless --show-card-data", async () => {
    const payout = requests.payout({ client_orderid: "cli-payout-2" })
    const pan = payout["credit_card_number"]!
    const hmacArgs = ["explain", "PAYOUT", ...Object.entries(payout).map(([n, v]) => `${n}=${v}`), "--login", testMerchant.login, "--key", testMerchant.controlKey, "--base-url", "http://paykit-sim.local", "--endpoint-id", "1001"]
    const masked = await paykit(hmacArgs)
    expect(masked.code).toBe(0)
    expect(masked.stdout).not.toContain(pan)
    expect(masked.stdout).toContain(`${pan.slice(0, 6)}${"*".repeat(pan.length - 10)}${pan.slice(-4)}`)
    expect(masked.stdout).toContain("--show-card-data")
    expect(masked.stdout).not.toContain(testMerchant.controlKey)
    const shown = await paykit([...hmacArgs, "--show-card-data"])
    expect(shown.stdout).toContain(pan)
  })

  it("signs what the simulator accepts (the header sent as is)", async () => {
    const sim = createSimulator()
    try {
      const ran = await paykit(["sign", ...args])
      expect(ran.code).toBe(0)
      const authorization = ran.stdout.trim()
      expect(authorization).toMatch(/^OAuth oauth_consumer_key="paykit-test", oauth_nonce="[^"]+", oauth_signature="[^"]+", oauth_signature_method="RSA-SHA256", oauth_timestamp="\d+", oauth_version="1.0"$/)
      const res = await sim.fetch(new Request("http://paykit-sim.local/api/v4/payout-check/1001", {
        method: "POST",
        headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded", authorization },
        body: new URLSearchParams(body)
      }))
      const reply = (await res.json()) as Record<string, string>
      expect(reply["type"]).toBe("async-response")
      expect(res.status).toBe(200)
      // one character off and the simulator refuses it
      const bad = authorization.replace(/oauth_signature="(.)/, (_m, c: string) => `oauth_signature="${c === "A" ? "B" : "A"}`)
      const refused = await sim.fetch(new Request("http://paykit-sim.local/api/v4/payout-check/1001", {
        method: "POST",
        headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded", authorization: bad },
        body: new URLSearchParams({ ...body, client_orderid: "cli-payout-3" })
      }))
      expect(refused.status).not.toBe(200)
    } finally {
      await sim.close()
    }
  })
})
