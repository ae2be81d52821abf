/**
 * The prepared signers (issue 14): key and consumer prepared once, every name and value encoded
 * once. They must give exactly `signOAuth`'s output, vector for vector and on random input.
 */
import { createHmac } from "node:crypto"
import { inspect } from "node:util"
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import {
  createHmacSigner,
  createRsaSigner,
  loadPrivateKey,
  percentEncode,
  signatureBaseString,
  signOAuth,
  type OAuthSigner,
  type ParamPair,
  type RsaPrivateKey
} from "../src/index"
import { oauthVectors, readKey, type OAuthCase } from "./vectors"

const keys = new Map<string, RsaPrivateKey>()
beforeAll(() => {
  for (const [id, files] of Object.entries(oauthVectors.keys)) keys.set(id, loadPrivateKey(readKey(files.private_key_file)))
})

function signerFor(c: OAuthCase): OAuthSigner {
  const token = c.oauth["oauth_token"] === undefined ? {} : { token: { key: c.oauth["oauth_token"], secret: c.token_secret } }
  const consumerKey = c.oauth["oauth_consumer_key"] as string
  return c.signature_method === "HMAC-SHA1"
    ? createHmacSigner({ consumerKey, consumerSecret: c.consumer_secret as string, ...token })
    : createRsaSigner({ consumerKey, privateKey: keys.get(c.private_key as string) as RsaPrivateKey, ...token })
}

describe("createHmacSigner / createRsaSigner", () => {
  it.each(oauthVectors.cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    const signed = signerFor(c).sign(
      { method: c.method, url: c.url, params: c.params },
      { nonce: c.oauth["oauth_nonce"] as string, timestamp: c.oauth["oauth_timestamp"] as string, ...(c.realm === undefined ? {} : { realm: c.realm }) }
    )
    expect(signed.baseStringUri).toBe(c.base_string_uri)
    expect(signed.normalizedParameters).toBe(c.normalized_params)
    expect(signed.baseString).toBe(c.base_string)
    expect(signed.signature).toBe(c.signature)
    expect(signed.authorizationHeader).toBe(c.authorization_header)
  })

  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
  const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "binary", maxLength: 12 }).filter((s) => !LONE_SURROGATE.test(s)))
  const name = text.filter((s) => !s.startsWith("oauth_"))
  // Secrets past 64 bytes take the KeyObject path; shorter ones the prepared pads.
  const secret = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ minLength: 60, maxLength: 90 }), fc.string({ unit: "binary", maxLength: 30 }).filter((s) => !LONE_SURROGATE.test(s)))

  it("equals signOAuth and an independent HMAC over the reference base string, on random requests", () => {
    fc.assert(fc.property(fc.array(fc.tuple(name, text), { maxLength: 10 }), secret, fc.constantFrom("", "?a=1&b=%20x", "?z"), (params, consumerSecret, query) => {
      const url = `https://gate.example.com/paynet/api/v2/payout/12${query}`
      const options = { nonce: "n-1", timestamp: 1_700_000_000 }
      const viaSigner = createHmacSigner({ consumerKey: "login", consumerSecret }).sign({ url, params }, options)
      const direct = signOAuth({ url, params, consumerKey: "login", signatureMethod: "HMAC-SHA1", consumerSecret }, options)
      expect(viaSigner.authorizationHeader).toBe(direct.authorizationHeader)
      expect(viaSigner.baseString).toBe(direct.baseString)
      const protocol: Array<ParamPair> = [["oauth_consumer_key", "login"], ["oauth_nonce", "n-1"], ["oauth_signature_method", "HMAC-SHA1"], ["oauth_timestamp", "1700000000"], ["oauth_version", "1.0"]]
      const base = signatureBaseString("POST", url, [...params, ...protocol])
      expect(viaSigner.baseString).toBe(base)
      expect(viaSigner.signature).toBe(createHmac("sha1", `${percentEncode(consumerSecret)}&`).update(base).digest("base64"))
    }), { numRuns: 300 })
  })

  it("keeps the same answers across many distinct URLs (the URL cache is bounded and exact)", () => {
    const signer = createHmacSigner({ consumerKey: "login", consumerSecret: "k" })
    for (let i = 0; i < 600; i++) {
      const url = `https://gate.example.com/p/${i % 300}?n=${i}`
      const a = signer.sign({ url, params: [["x", String(i)]] }, { nonce: "n", timestamp: 1 })
      const b = signOAuth({ url, params: [["x", String(i)]], consumerKey: "login", signatureMethod: "HMAC-SHA1", consumerSecret: "k" }, { nonce: "n", timestamp: 1 })
      expect(a.authorizationHeader).toBe(b.authorizationHeader)
      expect(a.normalizedParameters).toBe(`n=${i}&oauth_consumer_key=login&oauth_nonce=n&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1&oauth_version=1.0&x=${i}`)
    }
  })

  it("shows normalizedParameters in JSON though it is decoded only when read", () => {
    const signed = createHmacSigner({ consumerKey: "login", consumerSecret: "k" }).sign({ url: "https://h/p", params: [["a b", "c=d&e"]] }, { nonce: "n", timestamp: 1 })
    const json = JSON.parse(JSON.stringify(signed)) as Record<string, unknown>
    expect(json["normalizedParameters"]).toBe("a%20b=c%3Dd%26e&oauth_consumer_key=login&oauth_nonce=n&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1&oauth_version=1.0")
    expect(Object.keys(json).sort()).toEqual(["authorizationHeader", "baseString", "baseStringUri", "normalizedParameters", "oauthParams", "signature"])
  })

  it("refuses what signOAuth refuses, with the same typed errors", () => {
    const signer = createHmacSigner({ consumerKey: "login", consumerSecret: "k" })
    expect(() => signer.sign({ url: "https://h/p", params: [["oauth_nonce", "x"]] })).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", rule: "reserved-name" }))
    expect(() => signer.sign({ url: "https://h/p?oauth_token=x" })).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", rule: "reserved-name" }))
    expect(() => signer.sign({ url: "ftp://h/p" })).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", rule: "invalid-url" }))
    expect(() => signer.sign({ url: "https://h/p", params: [["a", 1 as unknown as string]] })).toThrow(expect.objectContaining({ rule: "not-a-string" }))
    expect(() => createHmacSigner({ consumerKey: "", consumerSecret: "k" })).toThrow(expect.objectContaining({ field: "consumerKey", rule: "missing" }))
    expect(() => createRsaSigner({ consumerKey: "l", privateKey: {} as RsaPrivateKey })).toThrow(expect.objectContaining({ field: "privateKey" }))
  })

  it("never shows its key", () => {
    const secret = "SECRET-CONTROL-KEY-0123"
    const signer = createHmacSigner({ consumerKey: "login", consumerSecret: secret })
    for (const shown of [String(signer), JSON.stringify(signer), inspect(signer, { showHidden: true, depth: 5 }), JSON.stringify(Object.entries(signer))]) {
      expect(shown).not.toContain(secret)
      expect(shown).not.toContain("SECRET")
    }
  })
})
