import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { operations } from "@paykit/contracts/operations"
import { describe, expect, it } from "vitest"
import { controlSchemeOf, createOAuthVerifier, loadPrivateKey, loadPublicKey, NotControlSignedError, signOAuth } from "../src/index"

// TEST-ONLY keys from the vectors.
const key = (name: string) => readFileSync(fileURLToPath(new URL(`./vectors/keys/${name}`, import.meta.url)), "utf8")
const privateKey = loadPrivateKey(key("rsa2048.pkcs8.pem"))
const publicKey = loadPublicKey(key("rsa2048.pub.pem"))

// Recurring process and update (docs/decisions.md#13-recurring-payments, docs/decisions.md#d13p-process-a-recurring-payment, docs/decisions.md#d13u-update-a-recurring-payment): v4 operations signed like
// CREATE_RP_V4, by OAuth RSA-SHA256 from the operation table, never by a control digest.
describe("recurring process and update in the operation table", () => {
  it.each(["PROCESS_RP_V4", "UPDATE_RP_V4"] as const)("%s is OAuth RSA-SHA256 like CREATE_RP_V4, not control-signed", (id) => {
    expect(operations[id].auth).toEqual(operations.CREATE_RP_V4.auth)
    expect(operations[id].auth).toEqual({ scheme: "oauth-rsa-sha256" })
    expect(() => controlSchemeOf(id)).toThrow(NotControlSignedError)
  })

  it.each([
    ["PROCESS_RP_V4", [["client-orderid", "rp-charge-1"], ["recurring-payment-id", "RP0000000112ab34cd"], ["amount", "9.99"]]],
    ["UPDATE_RP_V4", [["client-orderid", "rp-update-1"], ["recurring-payment-id", "RP0000000112ab34cd"], ["period", "week"], ["interval", "2"]]]
  ] as const)("%s: signed over its path (and the group path form), verified; any changed field fails", async (id, fields) => {
    const params = fields.map(([n, v]) => [n, v] as [string, string])
    const verifier = createOAuthVerifier({ lookupConsumer: () => ({ publicKey }), now: () => 1718967349_000 })
    for (const endpoint of ["1001", "group/2001"]) {
      const url = `https://sandbox.example.com/paynet${operations[id].path.replace("{endpointId}", endpoint)}`
      const signed = signOAuth({ url, params, consumerKey: "merchant-login", signatureMethod: "RSA-SHA256", privateKey }, { nonce: `n-${id}-${endpoint}`, timestamp: 1718967349 })
      const ok = await verifier.verify({ url, params, authorizationHeader: signed.authorizationHeader }, { signatureMethods: ["RSA-SHA256"] })
      expect(ok.ok).toBe(true)
      const changed = params.map(([n, v]) => [n, n === "recurring-payment-id" ? `${v}0` : v] as [string, string])
      const bad = await verifier.verify({ url, params: changed, authorizationHeader: signed.authorizationHeader }, { signatureMethods: ["RSA-SHA256"] })
      expect(bad.ok ? "ok" : bad.reason).toBe("bad-signature")
    }
  })
})
