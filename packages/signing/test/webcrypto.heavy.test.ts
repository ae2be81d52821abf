/**
 * The WebCrypto provider (issue 15): every vector gives the same result through the asynchronous
 * API on WebCrypto as through the synchronous one on node:crypto; and the package loads and works
 * in a process where node:crypto cannot be imported at all.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import {
  controlDigestAsync,
  CryptoUnavailableError,
  defaultCryptoProvider,
  importPrivateKey,
  importPublicKey,
  loadPrivateKey,
  signOAuth,
  signOAuthAsync,
  WebCryptoPrivateKey
} from "../src/index"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"
import { readKey, VECTORS_DIR } from "./vectors"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const runner = join(packageDir, "test/fixtures/run-vectors-webcrypto.ts")
const entry = join(packageDir, "src/index.ts")
// ../shared/vectors beside the repository (where CI and every developer checkout have it).
const SHARED = join(packageDir, "../../../shared/vectors")

async function run(preload: ReadonlyArray<string>, dir: string): Promise<{ passed: number; failed: number; failures: Array<string>; syncError: string; provider: string }> {
  const child = await runToExit(process.execPath, [...preload, "--conditions=@paykit/source", "--import", "tsx", runner, entry, dir], { cwd: packageDir })
  expect(child.stderr).toBe("")
  expect(child.code).toBe(0)
  return JSON.parse(child.stdout.trim().split("\n").at(-1) as string)
}

describe("WebCrypto provider", () => {
  it("passes every vector through the async API on WebCrypto (keys imported from PKCS#8 and PKCS#1 PEM)", async () => {
    const report = await run([], VECTORS_DIR)
    expect(report.failures).toEqual([])
    expect(report.passed).toBeGreaterThan(120)
    expect(report.provider).toBe("node")
    expect(report.syncError).toBe("none")
  }, HANG_GUARD_MS + 30_000)

  it("loads and passes every vector where node:crypto cannot be imported; the sync API says why it cannot run", async () => {
    const report = await run(["--import", join(packageDir, "test/fixtures/no-node-crypto.mjs")], VECTORS_DIR)
    expect(report.failures).toEqual([])
    expect(report.passed).toBeGreaterThan(120)
    expect(report.provider).toBe("webcrypto")
    expect(report.syncError).toBe("CryptoUnavailableError")
  }, HANG_GUARD_MS + 30_000)

  it("the preload really blocks node:crypto (the test above would prove nothing otherwise)", async () => {
    const child = await runToExit(process.execPath, ["--import", join(packageDir, "test/fixtures/no-node-crypto.mjs"), "--input-type=module", "-e", 'await import("node:crypto")'])
    expect(child.code).not.toBe(0)
    expect(child.stderr).toContain("node:crypto does not exist in this runtime")
  }, HANG_GUARD_MS + 30_000)

  it("no source module imports a node: built-in statically (only `import type`)", () => {
    const offenders: Array<string> = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (/^\s*import\s+(?!type\b)[^;]*from\s+["'](node:|crypto["'])/m.test(readFileSync(path, "utf8"))) offenders.push(path)
      }
    }
    walk(join(packageDir, "src"))
    expect(offenders).toEqual([])
  })

  it("the built entry (when built) imports no node: built-in: only its two package dependencies", () => {
    let built: string
    try {
      built = readFileSync(join(packageDir, "dist/index.js"), "utf8")
    } catch {
      return // not built in this checkout; `tsup` then this test checks it
    }
    const imports = [...built.matchAll(/^import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1])
    expect([...new Set(imports)].sort()).toEqual(["@paykit/contracts/operations", "currency-codes"])
    expect(built).not.toMatch(/require\(["'](node:)?crypto["']\)/)
  })

  it("the shared vectors pass too, when present", async () => {
    let present = true
    try {
      readdirSync(SHARED)
    } catch {
      present = false
    }
    if (!present) return
    expect((await run([], SHARED)).failures).toEqual([])
  }, HANG_GUARD_MS + 30_000)

  it("gives the node provider's results with a node-loaded key used on WebCrypto", async () => {
    const privateKey = loadPrivateKey(readKey("rsa2048.pkcs8.pem"))
    const request = { url: "https://h.example/paynet/api/v4/sale/1", params: [["amount", "1.00"]] as Array<[string, string]>, consumerKey: "l", signatureMethod: "RSA-SHA256" as const, privateKey }
    const fixed = { nonce: "n", timestamp: 1 }
    const web = await signOAuthAsync(request, { ...fixed, crypto: "webcrypto" })
    expect(web.signature).toBe(signOAuth(request, fixed).signature)
    expect(await signOAuthAsync(request, { ...fixed, crypto: "node" })).toMatchObject({ signature: web.signature })
    expect(defaultCryptoProvider()).toBe("node")
  })

  it("imports keys with typed errors for what WebCrypto cannot take", async () => {
    const key = await importPrivateKey(readKey("rsa2048.pkcs1.pem"))
    expect(key).toBeInstanceOf(WebCryptoPrivateKey)
    expect(key.bits).toBe(2048)
    expect(String(key)).toBe("WebCryptoPrivateKey(2048 bits, <redacted>)")
    expect(JSON.stringify({ key })).toBe('{"key":"<redacted>"}')
    await expect(importPrivateKey(readKey("rsa2048.pub.pem"))).rejects.toMatchObject({ _tag: "KeyFormatError", reason: "wrong-key-type" })
    await expect(importPublicKey(readKey("rsa2048.pkcs8.pem"))).rejects.toMatchObject({ _tag: "KeyFormatError", reason: "wrong-key-type" })
    await expect(importPrivateKey("not a key")).rejects.toMatchObject({ _tag: "KeyFormatError", reason: "unsupported-format" })
    const encrypted = loadPrivateKey(readKey("rsa2048.pkcs8.pem")).keyObject.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "pw" }).toString()
    await expect(importPrivateKey(encrypted)).rejects.toMatchObject({ _tag: "KeyFormatError", reason: "unsupported-format", message: expect.stringContaining("encrypted") })
    const legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n"
    await expect(importPrivateKey(legacy)).rejects.toMatchObject({ reason: "unsupported-format" })
    const { generateKeyPairSync } = await import("node:crypto")
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    await expect(importPrivateKey(weak)).rejects.toMatchObject({ _tag: "WeakKeyError", bits: 1024 })
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    await expect(importPrivateKey(ec)).rejects.toMatchObject({ _tag: "KeyFormatError" })
  })

  it("rejects (never throws synchronously) bad input, and names an unknown provider", async () => {
    const scheme = { code: "C6", fields: ["endpointId", "client_orderid", "amount", "email"] }
    const promise = controlDigestAsync(scheme, { amount: "1e3", currency: "USD" }, "k", { endpointId: 1, crypto: "webcrypto" })
    await expect(promise).rejects.toMatchObject({ _tag: "InvalidAmountError" })
    await expect(controlDigestAsync(scheme, { amount: "1", currency: "USD" }, "k", { endpointId: 1, crypto: "wasm" as "node" })).rejects.toBeInstanceOf(CryptoUnavailableError)
  })
})
