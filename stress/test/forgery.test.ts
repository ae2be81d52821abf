/**
 * Forged signatures, sent to the simulator: 100% rejected with the right error-code.
 *
 * Wycheproof: a vector's `msg` can never be an OAuth base string (those are built from the
 * request: `POST&<url>&<params>`), so the vectors go through the exact verification function the
 * simulator's auth path calls. The path is simulator → `@paykit/signing` `createOAuthVerifier` →
 * `node:crypto.verify("sha256", baseString, merchantKey, signature)`. This file wraps
 * `node:crypto.verify` (on the built-in module) to record every call, PROVES with a real signed simulator request
 * (and the same request with its signature bytes flipped) that the simulator's decision is exactly
 * that function's answer on the base string and the merchant's key, then runs every vector through
 * that same function with the group's key loaded by `loadPublicKey` (the loader the simulator uses
 * for `rsaPublicKeyPem`). In addition every vector signature is transplanted onto a real v4 request
 * to a simulator whose merchant holds the vector group's key: all must be refused.
 */
import { createPublicKey, type KeyObject } from "node:crypto"
import { readFileSync } from "node:fs"
import { authorizationHeader, loadPublicKey, loadPrivateKey, signControl, signOAuth } from "@paykit/signing"
import { createSimulator, requests, testMerchant, type Simulator } from "@paykit/testkit"
import { afterAll, describe, expect, it, vi } from "vitest"
import { errorCodeOf, formHeaders, ORIGIN, send } from "../src/wire"

interface VerifyCall { algorithm: unknown; data: Buffer; key: KeyObject; signature: Buffer; result: boolean }
const calls: VerifyCall[] = []

// @paykit/signing reaches node:crypto through `process.getBuiltinModule` (so it loads where
// node:crypto is missing), which a module mock cannot see: wrap `verify` on the built-in itself.
const crypto = process.getBuiltinModule("node:crypto") as typeof import("node:crypto")
const actualVerify = crypto.verify
const recordingVerify = (...args: Parameters<typeof actualVerify>) => {
  const result = (actualVerify as (...a: unknown[]) => unknown)(...args) as boolean
  const [algorithm, data, key, signature] = args as unknown as [unknown, Uint8Array, KeyObject, Uint8Array]
  calls.push({ algorithm, data: Buffer.from(data), key, signature: Buffer.from(signature), result })
  return result
}
;(crypto as { verify: unknown }).verify = recordingVerify
afterAll(() => {
  ;(crypto as { verify: unknown }).verify = actualVerify
})
const dir = new URL("./wycheproof/", import.meta.url)

interface Vector { tcId: number; comment: string; msg: string; sig: string; result: "valid" | "invalid" | "acceptable"; flags: string[] }
interface Group { keySize: number; publicKeyDer: string; publicKeyPem: string; tests: Vector[] }
const files = ["rsa_signature_2048_sha256_test.json", "rsa_signature_4096_sha256_test.json"]
const groups: Array<Group & { file: string }> = files.flatMap((file) =>
  (JSON.parse(readFileSync(new URL(file, dir), "utf8")) as { testGroups: Group[] }).testGroups.map((g) => ({ ...g, file })))

/** The group's key converted to SPKI PEM with node:crypto (from its DER), as a merchant registers it. */
const spkiPem = (g: Group): string =>
  createPublicKey({ key: Buffer.from(g.publicKeyDer, "hex"), format: "der", type: "spki" }).export({ type: "spki", format: "pem" }).toString()

const sims: Simulator[] = []
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()))
})


async function sendV4(sim: Simulator, login: string, endpointId: number, header: (fields: Record<string, string>, url: string) => string) {
  const path = `/api/v4/payout-check/${endpointId}`
  const fields = requests.payoutCheck()
  return send(sim.fetch, path, new URLSearchParams(fields).toString(), formHeaders({ authorization: header(fields, ORIGIN + path) }))
}

describe("the simulator's RSA decision is node:crypto.verify on the base string and the merchant key", () => {
  const sim = createSimulator({ clock: "real" })
  sims.push(sim)
  const privateKey = loadPrivateKey(testMerchant.privateKeyPem)
  const merchantSpki = createPublicKey(testMerchant.publicKeyPem).export({ type: "spki", format: "der" })

  it("a signed v4 request: one verify call, on exactly that base string and key, answering true → accepted", async () => {
    let signed: ReturnType<typeof signOAuth> | undefined
    calls.length = 0
    const reply = await sendV4(sim, testMerchant.login, testMerchant.endpointId, (fields, url) => {
      signed = signOAuth({ url, params: fields, consumerKey: testMerchant.login, signatureMethod: "RSA-SHA256", privateKey }, { timestamp: Math.floor(sim.clock.now() / 1000) })
      return signed.authorizationHeader
    })
    expect(reply.status).toBe(200)
    expect(calls).toHaveLength(1)
    const call = calls[0]!
    expect(call.algorithm).toBe("sha256")
    expect(call.data.toString("utf8")).toBe(signed!.baseString)
    expect(call.key.export({ type: "spki", format: "der" }).equals(merchantSpki)).toBe(true)
    expect(call.signature.toString("base64")).toBe(signed!.signature)
    expect(call.result).toBe(true)
  })

  it("the same request with its signature bytes flipped: the same function answers false → oauth-bad-signature", async () => {
    calls.length = 0
    let flipped: Uint8Array = new Uint8Array(0)
    const reply = await sendV4(sim, testMerchant.login, testMerchant.endpointId, (fields, url) => {
      const signed = signOAuth({ url, params: fields, consumerKey: testMerchant.login, signatureMethod: "RSA-SHA256", privateKey }, { timestamp: Math.floor(sim.clock.now() / 1000) })
      flipped = Uint8Array.from(Buffer.from(signed.signature, "base64"), (b) => b ^ 0xff)
      return authorizationHeader({ ...signed.oauthParams, oauth_signature: Buffer.from(flipped).toString("base64") })
    })
    expect(errorCodeOf(reply)).toMatchObject({ ok: true, code: "oauth-bad-signature" })
    expect(calls).toHaveLength(1)
    expect(calls[0]!.signature.equals(Buffer.from(flipped))).toBe(true)
    expect(calls[0]!.result).toBe(false)
  })
})

describe("Wycheproof RSASSA-PKCS1-v1_5 SHA-256 (2048, 4096)", () => {
  const counts = { valid: 0, invalid: 0, acceptable: 0, acceptableAccepted: 0 }

  it("the group keys convert to SPKI PEM with node:crypto and load as the simulator loads them", () => {
    for (const g of groups) {
      const pem = spkiPem(g)
      expect(pem.trim()).toBe(g.publicKeyPem.trim())
      expect(loadPublicKey(pem).bits).toBe(g.keySize)
    }
  })

  it("every valid vector verifies and every invalid one is rejected, by the simulator's verify function", () => {
    const failures: string[] = []
    for (const g of groups) {
      const key = loadPublicKey(spkiPem(g)).keyObject
      for (const t of g.tests) {
        const accepted = crypto.verify("sha256", Buffer.from(t.msg, "hex"), key, Buffer.from(t.sig, "hex"))
        if (t.result === "acceptable") {
          counts.acceptable++
          if (accepted) counts.acceptableAccepted++
          continue
        }
        counts[t.result]++
        if (accepted !== (t.result === "valid")) failures.push(`${g.file} tcId ${t.tcId} (${t.result}, ${t.comment})`)
      }
    }
    console.log(`wycheproof: ${counts.valid} valid accepted, ${counts.invalid} invalid rejected, ${counts.acceptable} acceptable (${counts.acceptableAccepted} accepted)`)
    expect(failures).toEqual([])
    expect(counts.valid).toBe(16)
    expect(counts.invalid).toBe(499)
  })

  it("every vector signature transplanted onto a real v4 request to a merchant holding the group key is refused", async () => {
    const merchants = groups.map((g, i) => ({ login: `wycheproof-${i}`, controlKey: `wp-key-${i}`, endpointIds: [5000 + i], rsaPublicKeyPem: spkiPem(g) }))
    const sim = createSimulator({ merchants, clock: "real" })
    sims.push(sim)
    const codes = new Map<string, number>()
    let sent = 0
    let empty = 0
    for (const [i, g] of groups.entries()) {
      for (const t of g.tests) {
        if (t.sig === "") empty++
        const reply = await sendV4(sim, merchants[i]!.login, 5000 + i, () =>
          authorizationHeader({
            oauth_consumer_key: merchants[i]!.login,
            oauth_nonce: `wp${i}n${t.tcId}`,
            oauth_signature: Buffer.from(t.sig, "hex").toString("base64"),
            oauth_signature_method: "RSA-SHA256",
            oauth_timestamp: String(Math.floor(sim.clock.now() / 1000)),
            oauth_version: "1.0"
          }))
        sent++
        const r = errorCodeOf(reply)
        const key = r.ok ? r.code : r.why
        codes.set(key, (codes.get(key) ?? 0) + 1)
      }
    }
    // An empty signature cannot even be a parameter value: the header is malformed.
    expect(empty).toBeGreaterThan(0)
    expect(Object.fromEntries(codes)).toEqual({ "oauth-bad-signature": sent - empty, "oauth-malformed": empty })
    expect(sent).toBe(517)
  })
})

/** Control-signed operations, one per control code C1–C8, with fields that pass validation. */
const controlCases = [
  { op: "TDS_UPLOAD_CRES_RESULT", path: "/api/3ds/v1/upload-cres-result", fields: () => requests.uploadCresResult({ "client-order-id": "forge-1", orderid: "1000001" }) },
  { op: "ACCOUNT_VERIFICATION", path: "/api/v2/account-verification", fields: () => requests.accountVerification() },
  { op: "VOID", path: "/api/v2/void", fields: () => requests.void({ client_orderid: "forge-1", orderid: "1000001" }) },
  { op: "CAPTURE", path: "/api/v2/capture", fields: () => requests.capture({ client_orderid: "forge-1", orderid: "1000001", amount: "1.00", currency: "USD" }) },
  { op: "REBILL", path: "/api/v2/make-rebill", fields: () => requests.makeRebill({ cardrefid: "CR1" }) },
  { op: "SALE", path: "/api/v2/sale", fields: () => requests.sale() },
  { op: "STATUS", path: "/api/v2/status", fields: () => requests.status({ client_orderid: "forge-1", orderid: "1000001" }) },
  { op: "CARDINFO", path: "/api/v2/get-card-info", fields: () => requests.getCardInfo({ cardrefid: "CR1" }) }
] as const

describe("tampered control digests: every position, every other hex digit → control-mismatch", () => {
  const sim = createSimulator({ clock: "real" })
  sims.push(sim)
  for (const c of controlCases) {
    it(`${c.op}: 40 positions × 15 values`, async () => {
      const fields = c.fields() as Record<string, string>
      const control = signControl(c.op, fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
      const path = `${c.path}/${testMerchant.endpointId}`
      const codes = new Map<string, number>()
      let sent = 0
      for (let pos = 0; pos < control.length; pos++) {
        for (let d = 0; d < 16; d++) {
          const digit = d.toString(16)
          if (digit === control[pos]) continue
          const forged = control.slice(0, pos) + digit + control.slice(pos + 1)
          const r = errorCodeOf(await send(sim.fetch, path, new URLSearchParams({ ...fields, control: forged }).toString(), formHeaders()))
          const key = r.ok ? r.code : r.why
          codes.set(key, (codes.get(key) ?? 0) + 1)
          sent++
        }
      }
      expect(sent).toBe(600)
      expect(Object.fromEntries(codes)).toEqual({ "control-mismatch": 600 })
      // The untampered control passes authentication (so the 600 refusals were about the digest).
      const ok = errorCodeOf(await send(sim.fetch, path, new URLSearchParams({ ...fields, control }).toString(), formHeaders()))
      expect(ok.ok ? ok.code : "passed-auth").not.toBe("control-mismatch")
    })
  }
})

/*
 * Timestamps: the simulators here run on the real clock, so "now" is the same whether the window is
 * checked against the simulator clock (testkit README) or the wall clock (testkit engine since
 * 06:14 today). Offsets keep 2 s away from the ±300 s edge: a request may cross a second boundary
 * between signing and verifying.
 */

/** OAuth-signed requests: HMAC-SHA1 (payout) and RSA-SHA256 (v4 payout-check). */
const oauthCases = [
  { name: "HMAC-SHA1 payout", path: `/api/v2/payout/${testMerchant.endpointId}`, fields: () => requests.payout(), method: "HMAC-SHA1" as const },
  { name: "RSA-SHA256 payout-check", path: `/api/v4/payout-check/${testMerchant.endpointId}`, fields: () => requests.payoutCheck(), method: "RSA-SHA256" as const }
]

describe("OAuth forgeries sent to the simulator", () => {
  const sim = createSimulator({ clock: "real" })
  sims.push(sim)
  const privateKey = loadPrivateKey(testMerchant.privateKeyPem)
  const now = () => Math.floor(sim.clock.now() / 1000)
  let nonce = 0

  /** A correctly signed request; `mutate` may change the protocol parameters after signing. */
  function signed(c: (typeof oauthCases)[number], options: { timestamp?: number; nonce?: string } = {}) {
    const fields = c.fields() as Record<string, string>
    const url = ORIGIN + c.path
    const common = { url, params: fields, consumerKey: testMerchant.login }
    const opts = { timestamp: options.timestamp ?? now(), nonce: options.nonce ?? `forge-${++nonce}` }
    const s = c.method === "HMAC-SHA1"
      ? signOAuth({ ...common, signatureMethod: "HMAC-SHA1", consumerSecret: testMerchant.controlKey }, opts)
      : signOAuth({ ...common, signatureMethod: "RSA-SHA256", privateKey }, opts)
    return { fields, s, body: new URLSearchParams(fields).toString() }
  }

  for (const c of oauthCases) {
    it(`${c.name}: every bit of a valid signature flipped → oauth-bad-signature`, async () => {
      const bits = c.method === "HMAC-SHA1" ? 160 : 2048
      const codes = new Map<string, number>()
      for (let bit = 0; bit < bits; bit++) {
        const { s, body } = signed(c)
        const bytes = Buffer.from(s.signature, "base64")
        expect(bytes.length * 8).toBe(bits)
        bytes[bit >> 3] = bytes[bit >> 3]! ^ (0x80 >> (bit & 7))
        const header = authorizationHeader({ ...s.oauthParams, oauth_signature: bytes.toString("base64") })
        const r = errorCodeOf(await send(sim.fetch, c.path, body, formHeaders({ authorization: header })))
        const key = r.ok ? r.code : r.why
        codes.set(key, (codes.get(key) ?? 0) + 1)
      }
      expect(Object.fromEntries(codes)).toEqual({ "oauth-bad-signature": bits })
      // 2,048 RSA signs and verifies: ~5 s on a loaded machine, more while turbo runs other suites beside it.
    }, 90_000)

    it(`${c.name}: a replayed nonce → oauth-replayed-nonce (the first use is accepted)`, async () => {
      for (let i = 0; i < 25; i++) {
        const { s, body } = signed(c)
        const headers = formHeaders({ authorization: s.authorizationHeader })
        expect((await send(sim.fetch, c.path, body, headers)).status).toBe(200)
        expect(errorCodeOf(await send(sim.fetch, c.path, body, headers))).toMatchObject({ ok: true, code: "oauth-replayed-nonce" })
      }
    })

    it(`${c.name}: a stale or future timestamp → oauth-stale-timestamp; within ±300 s is accepted`, async () => {
      // The simulator checks the window against the wall clock (src/engine/engine.ts in @paykit/testkit):
      // a fake Date stands still, so an offset of 290 or 310 s is exactly that when it is checked,
      // however long the request takes (issue #32; timers stay real).
      vi.useFakeTimers({ toFake: ["Date"] })
      try {
        await staleOrFuture(c)
      } finally {
        vi.useRealTimers()
      }
    })
  }

  /** Stale or future timestamps are refused, ±290 s accepted (with Date fixed by the caller). */
  async function staleOrFuture(c: (typeof oauthCases)[number]) {
    for (const offset of [-310, 310, -3600, 3600, -86_400 * 365, 86_400 * 365]) {
      const { s, body } = signed(c, { timestamp: now() + offset })
      const r = errorCodeOf(await send(sim.fetch, c.path, body, formHeaders({ authorization: s.authorizationHeader })))
      expect(r, `offset ${offset}`).toMatchObject({ ok: true, code: "oauth-stale-timestamp" })
    }
    for (const offset of [-290, 0, 290]) {
      const { s, body } = signed(c, { timestamp: now() + offset })
      expect((await send(sim.fetch, c.path, body, formHeaders({ authorization: s.authorizationHeader }))).status, `offset ${offset}`).toBe(200)
    }
  }
})
