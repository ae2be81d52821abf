import { describe, expect, it } from "vitest"
import { authorizationHeader, generateNonce, InvalidRequestError, loadPrivateKey, parseOAuthHeader, signOAuth, type RsaPrivateKey } from "../src/index"
import { readKey } from "./vectors"

const url = "https://sandbox.example.com/paynet/api/v4/payout/1234"
const hmac = { url, consumerKey: "merchant-login", signatureMethod: "HMAC-SHA1" as const, consumerSecret: "secret" }

function requestError(fn: () => unknown): InvalidRequestError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError)
    return error as InvalidRequestError
  }
  throw new Error("expected InvalidRequestError")
}

describe("signOAuth defaults", () => {
  it("draws a fresh CSPRNG nonce and the current time", () => {
    const before = Math.floor(Date.now() / 1000)
    const a = signOAuth(hmac)
    const b = signOAuth(hmac)
    expect(a.oauthParams.oauth_nonce).not.toBe(b.oauthParams.oauth_nonce)
    expect(a.oauthParams.oauth_nonce).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(Number(a.oauthParams.oauth_timestamp)).toBeGreaterThanOrEqual(before)
    expect(Number(a.oauthParams.oauth_timestamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
    expect(a.oauthParams.oauth_version).toBe("1.0")
    expect(a.authorizationHeader.startsWith('OAuth oauth_consumer_key="merchant-login", oauth_nonce="')).toBe(true)
  })

  it("never repeats a nonce over many draws (pool refills included)", () => {
    const seen = new Set<string>()
    for (let i = 0; i < 5000; i++) seen.add(generateNonce())
    expect(seen.size).toBe(5000)
  })

  it("produces a header its own parser reads back", () => {
    const signed = signOAuth(hmac, { realm: "Payments API" })
    const parsed = parseOAuthHeader(signed.authorizationHeader)
    expect(parsed.ok && parsed.header).toMatchObject({ realm: "Payments API", consumerKey: "merchant-login", signature: signed.signature, version: "1.0" })
  })

  it("formats headers in sorted order with every value encoded", () => {
    expect(authorizationHeader({
      oauth_consumer_key: "m k", oauth_nonce: "n", oauth_signature: "a+b/c=", oauth_signature_method: "HMAC-SHA1", oauth_timestamp: "1", oauth_version: "1.0"
    }, "r é")).toBe('OAuth realm="r%20%C3%A9", oauth_consumer_key="m%20k", oauth_nonce="n", oauth_signature="a%2Bb%2Fc%3D", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1", oauth_version="1.0"')
  })
})

describe("signOAuth refuses what it cannot sign", () => {
  it.each([
    ["oauth_* in the body", () => signOAuth({ ...hmac, params: [["oauth_nonce", "x"]] }), "reserved-name"],
    ["oauth_* in the query", () => signOAuth({ ...hmac, url: `${url}?oauth_token=x` }), "reserved-name"],
    ["encoded oauth_* in the query", () => signOAuth({ ...hmac, url: `${url}?oauth%5Ftoken=x` }), "reserved-name"],
    ["a lone surrogate", () => signOAuth({ ...hmac, params: [["name", "\uD800"]] }), "lone-surrogate"],
    ["a non-string value", () => signOAuth({ ...hmac, params: { amount: 10 as unknown as string } }), "not-a-string"],
    ["an empty consumer key", () => signOAuth({ ...hmac, consumerKey: "" }), "missing"],
    ["a fractional timestamp", () => signOAuth(hmac, { timestamp: 1.5 }), "invalid-value"],
    ["a non-numeric timestamp", () => signOAuth(hmac, { timestamp: "soon" }), "invalid-value"],
    ["an empty nonce", () => signOAuth(hmac, { nonce: "" }), "invalid-value"],
    ["a relative URL", () => signOAuth({ ...hmac, url: "/api/v2/payout/1" }), "invalid-url"],
    ["a PEM string instead of a loaded key", () => signOAuth({ url, consumerKey: "m", signatureMethod: "RSA-SHA256", privateKey: readKey("rsa2048.pkcs8.pem") as unknown as RsaPrivateKey }), "invalid-value"],
    ["an unknown method", () => signOAuth({ ...hmac, signatureMethod: "PLAINTEXT" as "HMAC-SHA1" }), "invalid-value"]
  ])("%s", (_name, fn, rule) => {
    expect(requestError(fn).rule).toBe(rule)
  })

  it("does not put the consumer secret or key in errors", () => {
    const error = requestError(() => signOAuth({ ...hmac, consumerSecret: "TOP-SECRET", params: [["oauth_x", "1"]] }))
    expect(`${error.message}${JSON.stringify(error)}`).not.toContain("TOP-SECRET")
    const key: RsaPrivateKey = loadPrivateKey(readKey("rsa2048.pkcs8.pem"))
    const rsaError = requestError(() => signOAuth({ url: "nope", consumerKey: "m", signatureMethod: "RSA-SHA256", privateKey: key }))
    expect(JSON.stringify({ rsaError, key })).not.toContain("MII")
  })
})
