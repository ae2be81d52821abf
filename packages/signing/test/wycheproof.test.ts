import { createPublicKey } from "node:crypto"
import { describe, expect, it } from "vitest"
import { importPublicKey, loadPublicKey } from "../src/index"
import { verifyRsaSha256Web } from "../src/crypto/webcrypto"
import { verifyRsaSha256 } from "../src/oauth/sign"
import { readVector } from "./vectors"

interface WycheproofFile {
  testGroups: Array<{ keySize: number; publicKeyPem: string; tests: Array<{ tcId: number; msg: string; sig: string; result: "valid" | "invalid" | "acceptable" }> }>
}

// The verifier path of verifyOAuth: node:crypto RSASSA-PKCS1-v1_5 / SHA-256 over a loaded key.
describe.each(["rsa_signature_2048_sha256_test.json", "rsa_signature_4096_sha256_test.json"])("Wycheproof %s", (file) => {
  const vectors = readVector<WycheproofFile>(`wycheproof/${file}`)
  for (const group of vectors.testGroups) {
    it(`accepts every valid and rejects every invalid signature (${group.tests.length} cases, ${group.keySize} bits)`, () => {
      const key = loadPublicKey(createPublicKey(group.publicKeyPem))
      for (const t of group.tests) {
        const ok = verifyRsaSha256(Buffer.from(t.msg, "hex"), key.keyObject, Buffer.from(t.sig, "hex"))
        if (t.result !== "acceptable") expect([t.tcId, ok]).toEqual([t.tcId, t.result === "valid"])
      }
    })

    it(`the WebCrypto provider gives the same verdicts (${group.tests.length} cases, ${group.keySize} bits)`, async () => {
      const key = await importPublicKey(group.publicKeyPem)
      for (const t of group.tests) {
        const ok = await verifyRsaSha256Web(Buffer.from(t.msg, "hex"), key.cryptoKey, Buffer.from(t.sig, "hex"))
        if (t.result !== "acceptable") expect([t.tcId, ok]).toEqual([t.tcId, t.result === "valid"])
      }
    })
  }
})
