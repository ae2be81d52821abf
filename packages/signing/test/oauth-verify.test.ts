import { describe, expect, it } from "vitest"
import {
  createOAuthVerifier,
  InMemoryNonceStore,
  loadPrivateKey,
  loadPublicKey,
  OAuthVerificationError,
  parseOAuthHeader,
  signOAuth,
  verifyOAuth,
  type OAuthFailureReason,
  type OAuthVerifyRequest,
  type OAuthVerifyResult
} from "../src/index"
import { readKey } from "./vectors"

const SECRET = "B17F59B4-A7DC-41B4-8FF9-37D1ECEE0B5E"
const URL_ = "https://sandbox.example.com/paynet/api/v4/payout/1234"
const PARAMS: Array<[string, string]> = [["client_orderid", "ord-1"], ["amount", "10.00"], ["currency", "USD"]]
const T0 = 1_715_446_963
const privateKey = loadPrivateKey(readKey("rsa2048.pkcs8.pem"))
const publicKey = loadPublicKey(readKey("rsa2048.pub.pem"))

function hmacRequest(overrides: { nonce?: string; timestamp?: number; realm?: string } = {}): OAuthVerifyRequest {
  const signed = signOAuth(
    { url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: "HMAC-SHA1", consumerSecret: SECRET },
    { nonce: overrides.nonce ?? "nonce-1", timestamp: overrides.timestamp ?? T0, ...(overrides.realm === undefined ? {} : { realm: overrides.realm }) }
  )
  return { url: URL_, params: PARAMS, authorizationHeader: signed.authorizationHeader }
}

function verifier(now = T0 * 1000, windowSeconds?: number) {
  let clock = now
  const v = createOAuthVerifier({
    lookupConsumer: (key) => (key === "merchant-login" ? { consumerSecret: SECRET, publicKey } : undefined),
    now: () => clock,
    ...(windowSeconds === undefined ? {} : { windowSeconds })
  })
  return { v, setClock: (ms: number) => { clock = ms } }
}

function expectFailure(result: OAuthVerifyResult, reason: OAuthFailureReason): void {
  expect(result.ok ? "ok" : result.reason).toBe(reason)
  if (!result.ok) {
    expect(result.error).toBeInstanceOf(OAuthVerificationError)
    expect(result.error._tag).toBe("OAuthVerificationError")
    expect(result.error.reason).toBe(reason)
  }
}

describe("verifier: signature, timestamp, nonce", () => {
  it("accepts a fresh HMAC-SHA1 request and an RSA-SHA256 request", async () => {
    const { v } = verifier()
    expect(await v.verify(hmacRequest())).toMatchObject({ ok: true, consumerKey: "merchant-login", signatureMethod: "HMAC-SHA1", timestamp: T0, nonce: "nonce-1" })
    const rsa = signOAuth({ url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: "RSA-SHA256", privateKey }, { timestamp: T0 })
    expect(await v.verify({ url: URL_, params: PARAMS, authorizationHeader: rsa.authorizationHeader })).toMatchObject({ ok: true, signatureMethod: "RSA-SHA256" })
  })

  it("rejects a tampered body, URL or signature as bad-signature", async () => {
    const { v } = verifier()
    const request = hmacRequest()
    expectFailure(await v.verify({ ...request, params: [...PARAMS.slice(0, 2), ["currency", "EUR"]] }), "bad-signature")
    expectFailure(await v.verify({ ...request, url: `${URL_}5` }), "bad-signature")
    expectFailure(await v.verify({ ...request, params: [...PARAMS, ["extra", ""]] }), "bad-signature")
    const header = request.authorizationHeader as string
    const flipped = header.replace(/oauth_signature="(.)/, (_m, c: string) => `oauth_signature="${c === "A" ? "B" : "A"}`)
    expectFailure(await v.verify({ ...request, authorizationHeader: flipped }), "bad-signature")
    expectFailure(await v.verify({ ...request, authorizationHeader: header.replace(/oauth_signature="[^"]*"/, 'oauth_signature="%2A%2A"') }), "bad-signature")
  })

  it("rejects a tampered RSA signature and a signature by another key", async () => {
    const { v } = verifier()
    const rsa = signOAuth({ url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: "RSA-SHA256", privateKey }, { timestamp: T0 })
    const sig = Buffer.from(rsa.signature, "base64")
    sig[10] = (sig[10] as number) ^ 1
    const tampered = rsa.authorizationHeader.replace(/oauth_signature="[^"]*"/, `oauth_signature="${encodeURIComponent(sig.toString("base64"))}"`)
    expectFailure(await v.verify({ url: URL_, params: PARAMS, authorizationHeader: tampered }), "bad-signature")
    const other = loadPrivateKey(readKey("rsa4096.pkcs8.pem"))
    const byOther = signOAuth({ url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: "RSA-SHA256", privateKey: other }, { timestamp: T0 })
    expectFailure(await v.verify({ url: URL_, params: PARAMS, authorizationHeader: byOther.authorizationHeader }), "bad-signature")
  })

  it("accepts timestamps within ±300 s by default and rejects beyond as stale-timestamp", async () => {
    const { v } = verifier()
    expect((await v.verify(hmacRequest({ nonce: "a", timestamp: T0 - 300 }))).ok).toBe(true)
    expect((await v.verify(hmacRequest({ nonce: "b", timestamp: T0 + 300 }))).ok).toBe(true)
    expectFailure(await v.verify(hmacRequest({ nonce: "c", timestamp: T0 - 301 })), "stale-timestamp")
    expectFailure(await v.verify(hmacRequest({ nonce: "d", timestamp: T0 + 301 })), "stale-timestamp")
  })

  it("honours a configured window and the injected clock", async () => {
    const { v, setClock } = verifier(T0 * 1000, 30)
    expectFailure(await v.verify(hmacRequest({ timestamp: T0 - 31 })), "stale-timestamp")
    setClock((T0 - 20) * 1000)
    expect((await v.verify(hmacRequest({ timestamp: T0 - 31 }))).ok).toBe(true)
  })

  it("rejects a replayed nonce, per consumer, and forgets it once outside the window", async () => {
    const { v, setClock } = verifier()
    const request = hmacRequest({ nonce: "once" })
    expect((await v.verify(request)).ok).toBe(true)
    expectFailure(await v.verify(request), "replayed-nonce")
    expectFailure(await v.verify(hmacRequest({ nonce: "once", timestamp: T0 + 1 })), "replayed-nonce")
    setClock((T0 + 301) * 1000)
    expectFailure(await v.verify(request), "stale-timestamp")
  })

  it("does not burn the nonce of a request whose signature failed", async () => {
    const { v } = verifier()
    const request = hmacRequest({ nonce: "precious" })
    expectFailure(await v.verify({ ...request, params: [] }), "bad-signature")
    expect((await v.verify(request)).ok).toBe(true)
  })

  it("verifyOAuth requires and uses a shared nonce store", async () => {
    const nonceStore = new InMemoryNonceStore()
    const options = { lookupConsumer: () => ({ consumerSecret: SECRET }), now: () => T0 * 1000, nonceStore }
    expect((await verifyOAuth(hmacRequest(), options)).ok).toBe(true)
    expectFailure(await verifyOAuth(hmacRequest(), options), "replayed-nonce")
    expect(nonceStore.size).toBe(1)
  })
})

describe("verifier: who and how", () => {
  it("unknown consumer, consumer mismatch, method not allowed, no credential for the method", async () => {
    const { v } = verifier()
    const other = signOAuth({ url: URL_, params: PARAMS, consumerKey: "someone", signatureMethod: "HMAC-SHA1", consumerSecret: SECRET }, { timestamp: T0 })
    expectFailure(await v.verify({ url: URL_, params: PARAMS, authorizationHeader: other.authorizationHeader }), "unknown-consumer")
    expectFailure(await v.verify(hmacRequest(), { expectedConsumerKey: "another-login" }), "consumer-mismatch")
    expectFailure(await v.verify(hmacRequest(), { signatureMethods: ["RSA-SHA256"] }), "unsupported-method")
    const hmacOnly = createOAuthVerifier({ lookupConsumer: () => ({ consumerSecret: SECRET }), now: () => T0 * 1000 })
    const rsa = signOAuth({ url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: "RSA-SHA256", privateKey }, { timestamp: T0 })
    expectFailure(await hmacOnly.verify({ url: URL_, params: PARAMS, authorizationHeader: rsa.authorizationHeader }), "unsupported-method")
  })

  // oauth_* copies in the body or query (decision 7): see oauth-body-params.test.ts.
  it("refuses an oauth_* copy outside the header that differs from it", async () => {
    const { v } = verifier()
    const request = hmacRequest()
    expectFailure(await v.verify({ ...request, params: [...PARAMS, ["oauth_nonce", "nonce-2"]] }), "parameter-mismatch")
    expectFailure(await v.verify({ ...request, url: `${URL_}?oauth_version=2.0` }), "parameter-mismatch")
  })

  it("reports an unusable URL as malformed-request", async () => {
    const { v } = verifier()
    expectFailure(await v.verify({ ...hmacRequest(), url: "/relative" }), "malformed-request")
    expectFailure(await v.verify({ ...hmacRequest(), url: `${URL_}?a=%zz` }), "malformed-request")
  })
})

describe("strict Authorization header parsing", () => {
  const good = hmacRequest().authorizationHeader as string
  const withParam = (extra: string) => good.replace("OAuth ", `OAuth ${extra}, `)
  const without = (name: string) => good.replace(new RegExp(`(, )?${name}="[^"]*"(, )?`), (_m, a?: string, b?: string) => (a && b ? ", " : ""))

  it.each([
    ["malformed-header", undefined],
    ["malformed-header", ""],
    ["malformed-header", "Basic dXNlcjpwdw=="],
    ["malformed-header", "OAuth"],
    ["malformed-header", `${good},`],
    ["malformed-header", good.replace(/", /g, '" ; ')],
    ["malformed-header", good.replace('oauth_nonce="nonce-1"', "oauth_nonce=nonce-1")],
    ["malformed-header", good.replace('oauth_nonce="nonce-1"', 'oauth_nonce="nonce 1"')],
    ["malformed-header", good.replace('oauth_nonce="nonce-1"', 'oauth_nonce="n%zz"')],
    ["duplicate-parameter", withParam('oauth_nonce="nonce-2"')],
    ["duplicate-parameter", withParam('oauth_nonce="nonce-1"')],
    ["duplicate-parameter", `${good}, realm="a", realm="b"`],
    ["unexpected-parameter", withParam('oauth_token="t"')],
    ["unexpected-parameter", withParam('foo="bar"')],
    ["missing-parameter", without("oauth_nonce")],
    ["missing-parameter", without("oauth_signature")],
    ["missing-parameter", without("oauth_timestamp")],
    ["missing-parameter", without("oauth_consumer_key")],
    ["missing-parameter", without("oauth_signature_method")],
    ["missing-parameter", good.replace('oauth_nonce="nonce-1"', 'oauth_nonce=""')],
    ["unsupported-version", good.replace('oauth_version="1.0"', 'oauth_version="2.0"')],
    ["unsupported-version", good.replace('oauth_version="1.0"', 'oauth_version="1"')]
  ] as const)("%s: %j", (reason, header) => {
    const parsed = parseOAuthHeader(header)
    expect(parsed.ok ? "ok" : parsed.reason).toBe(reason)
  })

  it("reports an unsupported signature method and a non-numeric timestamp", async () => {
    const { v } = verifier()
    for (const method of ["PLAINTEXT", "RSA-SHA1", "HMAC-SHA256", "hmac-sha1"]) {
      expectFailure(await v.verify({ ...hmacRequest(), authorizationHeader: good.replace("HMAC-SHA1", method) }), "unsupported-method")
    }
    expectFailure(await v.verify({ ...hmacRequest(), authorizationHeader: good.replace(/oauth_timestamp="\d+"/, 'oauth_timestamp="1e9"') }), "invalid-timestamp")
  })

  it("accepts any scheme case, flexible spacing, an absent oauth_version and a realm", async () => {
    const { v } = verifier()
    expect(parseOAuthHeader(good.replace("OAuth ", "oauth  ").replace(/", /g, '" ,\t')).ok).toBe(true)
    expect((await v.verify({ ...hmacRequest({ nonce: "r", realm: "Example API" }) })).ok).toBe(true)
    const parsed = parseOAuthHeader(hmacRequest({ realm: "Example API" }).authorizationHeader)
    expect(parsed.ok && parsed.header.realm).toBe("Example API")
    expect(parseOAuthHeader(without("oauth_version")).ok).toBe(true)
  })
})

describe("InMemoryNonceStore", () => {
  it("forgets nonces whose expiry has passed and caps its size", () => {
    const store = new InMemoryNonceStore({ maxEntries: 2 })
    expect(store.remember("k", "a", 100, 0)).toBe(true)
    expect(store.remember("k", "a", 100, 50)).toBe(false)
    expect(store.remember("k2", "a", 100, 50)).toBe(true)
    expect(store.remember("k", "b", 100, 50)).toBe(false)
    expect(store.remember("k", "a", 200, 101)).toBe(true)
    expect(store.size).toBe(1)
    expect(store.remember("x", "y", 500, 101)).toBe(true)
    expect(store.remember("x", "z", 500, 101)).toBe(false)
  })

  it("keeps (consumer, nonce) pairs apart even when their concatenations collide", () => {
    const store = new InMemoryNonceStore()
    expect(store.remember("ab", "c", 500, 0)).toBe(true)
    expect(store.remember("a", "bc", 500, 0)).toBe(true)
    expect(store.remember("ab", "c", 500, 0)).toBe(false)
  })
})
