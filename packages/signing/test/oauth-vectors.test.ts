import { beforeAll, describe, expect, it } from "vitest"
import {
  baseStringUri,
  createOAuthVerifier,
  loadPrivateKey,
  loadPublicKey,
  normalizeParameters,
  signatureBaseString,
  signOAuth,
  type OAuthSignature,
  type RsaPrivateKey,
  type RsaPublicKey
} from "../src/index"
import { oauthVectors, readKey, type OAuthCase } from "./vectors"

const keys = new Map<string, { privateKey: RsaPrivateKey; publicKey: RsaPublicKey }>()
beforeAll(() => {
  for (const [id, files] of Object.entries(oauthVectors.keys)) {
    keys.set(id, { privateKey: loadPrivateKey(readKey(files.private_key_file)), publicKey: loadPublicKey(readKey(files.public_key_file)) })
  }
})

function sign(c: OAuthCase): OAuthSignature {
  const common = {
    method: c.method,
    url: c.url,
    params: c.params,
    consumerKey: c.oauth["oauth_consumer_key"] as string,
    ...(c.oauth["oauth_token"] === undefined ? {} : { token: { key: c.oauth["oauth_token"], secret: c.token_secret } })
  }
  const options = {
    nonce: c.oauth["oauth_nonce"] as string,
    timestamp: c.oauth["oauth_timestamp"] as string,
    ...(c.realm === undefined ? {} : { realm: c.realm })
  }
  if (c.signature_method === "HMAC-SHA1") {
    return signOAuth({ ...common, signatureMethod: "HMAC-SHA1", consumerSecret: c.consumer_secret as string }, options)
  }
  const key = keys.get(c.private_key as string)
  if (key === undefined) throw new Error(`no key ${String(c.private_key)}`)
  return signOAuth({ ...common, signatureMethod: "RSA-SHA256", privateKey: key.privateKey }, options)
}

describe("oauth.json vectors", () => {
  it.each(oauthVectors.cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    expect(baseStringUri(c.url)).toBe(c.base_string_uri)
    expect(normalizeParameters([...c.query_params, ...c.params, ...Object.entries(c.oauth)])).toBe(c.normalized_params)
    expect(signatureBaseString(c.method, c.url, [...c.params, ...Object.entries(c.oauth)])).toBe(c.base_string)
    const signed = sign(c)
    expect(signed.baseStringUri).toBe(c.base_string_uri)
    expect(signed.normalizedParameters).toBe(c.normalized_params)
    expect(signed.baseString).toBe(c.base_string)
    expect(signed.signature).toBe(c.signature)
    expect(signed.authorizationHeader).toBe(c.authorization_header)
  })

  it.each(oauthVectors.cases.filter((c) => c.oauth["oauth_token"] === undefined).map((c) => [c.id, c] as const))(
    "%s verifies end to end from URL, body and header",
    async (_id, c) => {
      const key = c.private_key === undefined ? undefined : keys.get(c.private_key)
      const verifier = createOAuthVerifier({
        lookupConsumer: (consumerKey) => consumerKey === c.oauth["oauth_consumer_key"]
          ? (key === undefined ? { consumerSecret: c.consumer_secret as string } : { publicKey: key.publicKey })
          : undefined,
        now: () => Number(c.oauth["oauth_timestamp"]) * 1000
      })
      const result = await verifier.verify({ method: c.method, url: c.url, params: c.params, authorizationHeader: c.authorization_header })
      expect(result).toMatchObject({ ok: true, consumerKey: c.oauth["oauth_consumer_key"], signatureMethod: c.signature_method })
    }
  )
})

describe("base_string_examples (RFC 5849 §3.4.1.1)", () => {
  it.each(oauthVectors.base_string_examples.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    expect(baseStringUri(c.url)).toBe(c.base_string_uri)
    expect(normalizeParameters([...c.query_params, ...c.params, ...Object.entries(c.oauth)])).toBe(c.normalized_params)
    expect(signatureBaseString(c.method, c.url, [...c.params, ...Object.entries(c.oauth)])).toBe(c.base_string)
  })

  it("matches the RFC text for the worked example", () => {
    // RFC 5849 §3.4.1.1: body "c2&a3=2+q", realm excluded, no oauth_version.
    const base = signatureBaseString("post", "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b", new URLSearchParams([
      ...new URLSearchParams("c2&a3=2+q"),
      ["oauth_consumer_key", "9djdj82h48djs9d2"],
      ["oauth_token", "kkk9d7dh3k39sjv7"],
      ["oauth_signature_method", "HMAC-SHA1"],
      ["oauth_timestamp", "137131201"],
      ["oauth_nonce", "7d8f3e4a"]
    ]))
    expect(base).toBe(
      "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q" +
      "%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_" +
      "key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_m" +
      "ethod%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk" +
      "9d7dh3k39sjv7"
    )
  })

  it("matches the interface's base string example", () => {
    expect(signatureBaseString("POST", "https://gateway.example/paynet/api/v4/sale/123", { oauth_consumer_key: "merchant", amount: "1.00", client_orderid: "hf-1" }))
      .toBe("POST&https%3A%2F%2Fgateway.example%2Fpaynet%2Fapi%2Fv4%2Fsale%2F123&amount%3D1.00%26client_orderid%3Dhf-1%26oauth_consumer_key%3Dmerchant")
  })
})
