import { generateKeyPairSync } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  createOAuthVerifier,
  InvalidAmountError,
  loadPrivateKey,
  OAuthVerificationError,
  signOAuth,
  SigningError,
  toMinorUnits,
  WeakKeyError
} from "../src/index"

/** The must-have rejections, side by side: each is a distinct typed error. */
describe("distinct typed rejections", () => {
  const SECRET = "B17F59B4-A7DC-41B4-8FF9-37D1ECEE0B5E"
  const url = "https://sandbox.example.com/paynet/api/v4/payout/1234"
  const params: Array<[string, string]> = [["client_orderid", "ord-1"], ["amount", "10.00"]]
  const now = 1_715_446_963

  async function oauthRejection(kind: "tampered" | "stale" | "replayed"): Promise<OAuthVerificationError> {
    const verifier = createOAuthVerifier({ lookupConsumer: () => ({ consumerSecret: SECRET }), now: () => now * 1000 })
    const signed = signOAuth({ url, params, consumerKey: "m", signatureMethod: "HMAC-SHA1", consumerSecret: SECRET }, { timestamp: kind === "stale" ? now - 3600 : now })
    const request = { url, params, authorizationHeader: signed.authorizationHeader }
    if (kind === "tampered") request.params = [["client_orderid", "ord-1"], ["amount", "99.00"]]
    if (kind === "replayed") expect((await verifier.verify(request)).ok).toBe(true)
    const result = await verifier.verify(request)
    if (result.ok) throw new Error(`${kind}: accepted`)
    return result.error
  }

  function thrown(fn: () => unknown): unknown {
    try {
      fn()
    } catch (error) {
      return error
    }
    throw new Error("did not throw")
  }

  it("tampered signature, stale timestamp, replayed nonce, 1024-bit key, malformed amount", async () => {
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey
    const errors = {
      tampered: await oauthRejection("tampered"),
      stale: await oauthRejection("stale"),
      replayed: await oauthRejection("replayed"),
      weakKey: thrown(() => loadPrivateKey(weak)),
      amount: thrown(() => toMinorUnits("10.", "USD"))
    }
    expect(errors.tampered).toMatchObject({ _tag: "OAuthVerificationError", reason: "bad-signature" })
    expect(errors.stale).toMatchObject({ _tag: "OAuthVerificationError", reason: "stale-timestamp" })
    expect(errors.replayed).toMatchObject({ _tag: "OAuthVerificationError", reason: "replayed-nonce" })
    expect(errors.weakKey).toBeInstanceOf(WeakKeyError)
    expect(errors.weakKey).toMatchObject({ _tag: "WeakKeyError", bits: 1024 })
    expect(errors.amount).toBeInstanceOf(InvalidAmountError)
    expect(errors.amount).toMatchObject({ _tag: "InvalidAmountError", rule: "pattern" })

    const identities = Object.values(errors).map((e) => {
      expect(e).toBeInstanceOf(SigningError)
      const err = e as SigningError & { reason?: string; rule?: string }
      return `${err._tag}/${err.reason ?? err.rule ?? ""}`
    })
    expect(new Set(identities).size).toBe(5)
  })
})
