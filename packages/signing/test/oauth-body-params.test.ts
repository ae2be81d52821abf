/**
 * docs/decisions.md#7-failed-authentication: the gateway's documentation asks for the `oauth_*` parameters in the form
 * body as well as in the `Authorization` header. The verifier accepts a copy that equals the
 * header's value (signing it once, from the header) and refuses one that differs.
 */
import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  authorizationHeader,
  createOAuthVerifier,
  loadPrivateKey,
  loadPublicKey,
  percentEncode,
  signatureBaseString,
  signOAuth,
  type OAuthFailureReason,
  type OAuthSignature,
  type OAuthVerifyResult,
  type ParamPair
} from "../src/index"
import { readKey } from "./vectors"

const SECRET = "B17F59B4-A7DC-41B4-8FF9-37D1ECEE0B5E"
const URL_ = "https://sandbox.example.com/paynet/api/v2/payout/1234"
const PARAMS: Array<ParamPair> = [["client_orderid", "ord-1"], ["amount", "10.00"], ["currency", "USD"]]
const T0 = 1_715_446_963
const privateKey = loadPrivateKey(readKey("rsa2048.pkcs8.pem"))
const publicKey = loadPublicKey(readKey("rsa2048.pub.pem"))

const verifier = () => createOAuthVerifier({
  lookupConsumer: (key) => (key === "merchant-login" ? { consumerSecret: SECRET, publicKey } : undefined),
  now: () => T0 * 1000
})

let nonce = 0
function signed(method: "HMAC-SHA1" | "RSA-SHA256" = "HMAC-SHA1"): OAuthSignature {
  const request = method === "HMAC-SHA1"
    ? { url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: method, consumerSecret: SECRET } as const
    : { url: URL_, params: PARAMS, consumerKey: "merchant-login", signatureMethod: method, privateKey } as const
  return signOAuth(request, { nonce: `nonce-${++nonce}`, timestamp: T0 })
}

/** The body as the gateway's documentation builds it: the form fields, then every oauth_* value. */
function withCopies(s: OAuthSignature, names?: ReadonlyArray<string>): Array<ParamPair> {
  const copies = Object.entries(s.oauthParams).filter(([name]) => names === undefined || names.includes(name))
  return [...PARAMS, ...copies]
}

function reason(result: OAuthVerifyResult): OAuthFailureReason | "ok" {
  return result.ok ? "ok" : result.reason
}

describe("oauth_* parameters in the body as well as the header", () => {
  it("accepts every protocol parameter (oauth_signature included) repeated in the body with equal values", async () => {
    const v = verifier()
    for (const method of ["HMAC-SHA1", "RSA-SHA256"] as const) {
      const s = signed(method)
      const body = withCopies(s)
      expect(body.some(([name]) => name === "oauth_signature")).toBe(true)
      expect(await v.verify({ url: URL_, params: body, authorizationHeader: s.authorizationHeader })).toMatchObject({ ok: true, signatureMethod: method })
    }
  })

  it("accepts some of them, in any order, in the body or in the query, and a form-encoded body", async () => {
    const v = verifier()
    const a = signed()
    const some = [["oauth_timestamp", String(T0)], ...PARAMS, ["oauth_consumer_key", "merchant-login"]] as Array<ParamPair>
    expect(reason(await v.verify({ url: URL_, params: some, authorizationHeader: a.authorizationHeader }))).toBe("ok")
    const b = signed()
    const query = `${URL_}?oauth_nonce=${b.oauthParams.oauth_nonce}&oauth_version=1.0`
    expect(reason(await v.verify({ url: query, params: PARAMS, authorizationHeader: b.authorizationHeader }))).toBe("ok")
    const c = signed()
    const form = new URLSearchParams(withCopies(c) as Array<[string, string]>)
    expect(form.toString()).toContain(`oauth_signature=${encodeURIComponent(c.signature)}`)
    expect(reason(await v.verify({ url: URL_, params: new URLSearchParams(form.toString()), authorizationHeader: c.authorizationHeader }))).toBe("ok")
  })

  it("refuses a copy that differs from the header (parameter-mismatch), each protocol parameter in turn", async () => {
    const v = verifier()
    for (const name of ["oauth_consumer_key", "oauth_nonce", "oauth_signature", "oauth_signature_method", "oauth_timestamp", "oauth_version"]) {
      const s = signed()
      const body = withCopies(s).map(([n, value]): ParamPair => [n, n === name ? `${value}x` : value])
      const result = await v.verify({ url: URL_, params: body, authorizationHeader: s.authorizationHeader })
      expect([name, reason(result)]).toEqual([name, "parameter-mismatch"])
      if (!result.ok) {
        expect(result.error._tag).toBe("OAuthVerificationError")
        expect(result.error.message).toContain(name)
      }
    }
    // A differing copy in the query is refused alike.
    const q = signed()
    expect(reason(await v.verify({ url: `${URL_}?oauth_timestamp=${T0 + 1}`, params: PARAMS, authorizationHeader: q.authorizationHeader }))).toBe("parameter-mismatch")
  })

  it("refuses a copy the header lacks (oauth_token, or oauth_version when the header has none)", async () => {
    const v = verifier()
    const s = signed()
    expect(reason(await v.verify({ url: URL_, params: [...PARAMS, ["oauth_token", "t"]], authorizationHeader: s.authorizationHeader }))).toBe("parameter-mismatch")
    // Build a header without oauth_version, signed correctly, then add oauth_version=1.0 to the body.
    const protocol = { oauth_consumer_key: "merchant-login", oauth_nonce: "no-version", oauth_signature_method: "HMAC-SHA1", oauth_timestamp: String(T0) }
    const base = signatureBaseString("POST", URL_, [...PARAMS, ...Object.entries(protocol)])
    const signature = createHmac("sha1", `${percentEncode(SECRET)}&`).update(base).digest("base64")
    const header = authorizationHeader({ ...protocol, oauth_signature: signature })
    expect(header).not.toContain("oauth_version")
    expect(reason(await v.verify({ url: URL_, params: [...PARAMS, ["oauth_version", "1.0"]], authorizationHeader: header }))).toBe("parameter-mismatch")
    expect(reason(await v.verify({ url: URL_, params: PARAMS, authorizationHeader: header }))).toBe("ok")
  })

  it("refuses the same protocol parameter twice outside the header, even with equal values", async () => {
    const v = verifier()
    const s = signed()
    const nonceCopy: ParamPair = ["oauth_nonce", s.oauthParams.oauth_nonce]
    expect(reason(await v.verify({ url: URL_, params: [...PARAMS, nonceCopy, nonceCopy], authorizationHeader: s.authorizationHeader }))).toBe("duplicate-parameter")
    const t = signed()
    const url = `${URL_}?oauth_nonce=${t.oauthParams.oauth_nonce}`
    expect(reason(await v.verify({ url, params: [...PARAMS, ["oauth_nonce", t.oauthParams.oauth_nonce]], authorizationHeader: t.authorizationHeader }))).toBe("duplicate-parameter")
  })

  it("signs each protocol parameter once: a signature over a base string that counts the copies twice is refused", async () => {
    const v = verifier()
    const protocol = { oauth_consumer_key: "merchant-login", oauth_nonce: "twice", oauth_signature_method: "HMAC-SHA1", oauth_timestamp: String(T0), oauth_version: "1.0" }
    const copies = Object.entries(protocol)
    const body: Array<ParamPair> = [...PARAMS, ...copies]
    const twice = signatureBaseString("POST", URL_, [...body, ...copies])
    const once = signatureBaseString("POST", URL_, body)
    expect(twice).not.toBe(once)
    const sign = (base: string) => authorizationHeader({ ...protocol, oauth_signature: createHmac("sha1", `${percentEncode(SECRET)}&`).update(base).digest("base64") })
    expect(reason(await v.verify({ url: URL_, params: body, authorizationHeader: sign(twice) }))).toBe("bad-signature")
    expect(reason(await v.verify({ url: URL_, params: body, authorizationHeader: sign(once) }))).toBe("ok")
  })

  it("still records the nonce: the same request with copies is a replay the second time", async () => {
    const v = verifier()
    const s = signed()
    const request = { url: URL_, params: withCopies(s), authorizationHeader: s.authorizationHeader }
    expect(reason(await v.verify(request))).toBe("ok")
    expect(reason(await v.verify(request))).toBe("replayed-nonce")
    expect(reason(await v.verify({ ...request, params: PARAMS }))).toBe("replayed-nonce")
  })

  it("a tampered body with equal copies is still bad-signature", async () => {
    const v = verifier()
    const s = signed()
    const body = withCopies(s).map(([n, value]): ParamPair => [n, n === "amount" ? "99.00" : value])
    expect(reason(await v.verify({ url: URL_, params: body, authorizationHeader: s.authorizationHeader }))).toBe("bad-signature")
  })
})
