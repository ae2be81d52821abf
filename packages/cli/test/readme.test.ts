/**
 * The README's examples run: each `paykit` line of its sh blocks (the simulator block against a
 * real simulator), checked against the `# →` line after it. Its TypeScript block runs in a process of
 * its own: readme-typescript.heavy.test.ts.
 */
import { createSimulator, testMerchant } from "@paykit/testkit"
import { readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { paykit } from "./helpers"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
const shBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

/** The commands of a block: continuation lines joined, each with the `# →` text that follows it. */
function commands(block: string): Array<{ line: string; expect: string | undefined }> {
  const joined = block.replace(/\\\n\s*/g, "")
  const out: Array<{ line: string; expect: string | undefined }> = []
  for (const raw of joined.split("\n")) {
    const arrow = /^#\s*→\s*(.*)$/.exec(raw.trim())
    if (arrow !== null && out.length > 0) {
      out[out.length - 1] = { ...out[out.length - 1]!, expect: arrow[1]! }
      continue
    }
    if (!raw.startsWith("paykit ")) continue
    const [command, inline] = raw.split(/\s+# /)
    const expectInline = inline === undefined ? undefined : /^→\s*(.*)$/.exec(inline)?.[1]
    out.push({ line: command!.trim(), expect: expectInline })
  }
  return out
}

/** Splits a command line as sh would for these examples: quotes, and ${VAR:-default}. */
function words(line: string, env: Record<string, string>): Array<string> {
  const expanded = (s: string) => s.replace(/\$\{(\w+):-([^}]*)\}/g, (_m, name: string, dflt: string) => env[name] || dflt)
  const out: Array<string> = []
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? expanded(m[2] ?? m[3]!))
  return out.slice(1)
}

describe("README", () => {
  it("has the offline example and the simulator example", () => {
    expect(shBlocks.length).toBeGreaterThanOrEqual(3)
  })

  it("the offline example prints what the README says", async () => {
    const block = shBlocks.find((b) => b.includes("paykit explain SALE"))!
    const lines = commands(block)
    expect(lines.length).toBe(4) // sign, explain, verify-callback with one key and with a rotation's two
    for (const { line, expect: expected } of lines) {
      const ran = await paykit(words(line, {}))
      expect(ran.code, line).toBe(0)
      expect(ran.stdout.split("\n")[0]).toBe(expected)
    }
    // the explain output shown in the README is the real one
    const shown = /`paykit explain` prints:\n\n```\n([\s\S]*?)```/.exec(readme)![1]!
    expect((await paykit(words(lines[1]!.line, {}))).stdout).toBe(shown)
  })

  it("the simulator example runs against a simulator", async () => {
    const sim = createSimulator()
    const server = await sim.listen({ port: 0, host: "127.0.0.1" })
    const dir = tmpdir()
    writeFileSync(join(dir, "paykit-sim-test-merchant.key.pem"), testMerchant.privateKeyPem, { mode: 0o600 })
    try {
      const block = shBlocks.find((b) => b.includes("paykit trigger"))!
      const env: Record<string, string> = { TMPDIR: dir }
      for (const m of block.matchAll(/^export (.*)$/gm)) for (const kv of m[1]!.split(/\s+/)) env[kv.split("=")[0]!] = kv.slice(kv.indexOf("=") + 1)
      env["PAYKIT_BASE_URL"] = server.url
      const lines = commands(block)
      expect(lines.length).toBe(3)
      const results = []
      for (const { line, expect: expected } of lines) {
        const ran = await paykit([...words(line, env), ...(line.startsWith("paykit trigger") ? ["--base-url", server.url] : [])], { env, fetch: globalThis.fetch })
        results.push(ran)
        if (expected?.startsWith("exit 1: ")) {
          expect(ran.code, line).toBe(1)
          expect(ran.stderr).toContain(expected.slice("exit 1: ".length).replace(/ \.\.\.$/, ""))
        } else {
          expect(ran.stderr, line).toBe("")
          expect(ran.code, line).toBe(0)
          if (expected !== undefined) expect(ran.stdout).toContain(expected.replace(/ \.\.\.$/, ""))
        }
      }
      // the signed payout-check is what the simulator accepts
      const authorization = results[2]!.stdout.trim()
      const res = await fetch(`${server.url}/api/v4/payout-check/1001`, {
        method: "POST",
        headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded", authorization },
        body: new URLSearchParams({ client_orderid: "p-1", amount: "75.00", currency: "EUR", order_desc: "refund", account_number: "DE89370400440532013000" })
      })
      expect(res.status).toBe(200)
    } finally {
      await server.close()
      await sim.close()
    }
  })
})
