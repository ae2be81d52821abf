import { spawnSync } from "node:child_process"
import { createPrivateKey, generateKeyPairSync, sign, verify } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect } from "node:util"
import forge from "node-forge"
import { describe, expect, it } from "vitest"
import { KeyFormatError, loadPkcs12PrivateKey, loadPrivateKey, loadPublicKey, RsaPrivateKey, WeakKeyError } from "../src/index"
import { readKey } from "./vectors"

const PKCS8 = readKey("rsa2048.pkcs8.pem")
const PKCS1 = readKey("rsa2048.pkcs1.pem")
const SPKI = readKey("rsa2048.pub.pem")
const PASS = "correct horse battery staple"

function keyError(fn: () => unknown): KeyFormatError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(KeyFormatError)
    return error as KeyFormatError
  }
  throw new Error("expected KeyFormatError")
}

function sameKey(a: RsaPrivateKey, b: RsaPrivateKey): boolean {
  const data = Buffer.from("same key?")
  return sign("sha256", data, a.keyObject).equals(sign("sha256", data, b.keyObject))
}

describe("loadPrivateKey", () => {
  it("reads PKCS#8 and PKCS#1 PEM (one key, two encodings)", () => {
    const a = loadPrivateKey(PKCS8)
    const b = loadPrivateKey(Buffer.from(PKCS1))
    expect(a.bits).toBe(2048)
    expect(sameKey(a, b)).toBe(true)
    expect(loadPrivateKey(readKey("rsa4096.pkcs8.pem")).bits).toBe(4096)
  })

  it("reads encrypted PKCS#8 and encrypted PKCS#1 PEM with the passphrase", () => {
    const plain = createPrivateKey(PKCS8)
    const pkcs8 = plain.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: PASS }).toString()
    const pkcs1 = plain.export({ type: "pkcs1", format: "pem", cipher: "aes-128-cbc", passphrase: PASS }).toString()
    expect(pkcs8).toContain("ENCRYPTED PRIVATE KEY")
    expect(pkcs1).toContain("Proc-Type: 4,ENCRYPTED")
    for (const pem of [pkcs8, pkcs1]) {
      expect(sameKey(loadPrivateKey(pem, { passphrase: PASS }), loadPrivateKey(PKCS8))).toBe(true)
      expect(keyError(() => loadPrivateKey(pem)).reason).toBe("passphrase-required")
      expect(keyError(() => loadPrivateKey(pem, { passphrase: "wrong" })).reason).toBe("bad-passphrase")
    }
  })

  it("a wrong passphrase is bad-passphrase every time, also when it decrypts to bytes that pass the padding check", () => {
    // Legacy PEM encryption (PKCS#1, aes-128-cbc) checks only the CBC padding: about one wrong
    // passphrase in 256 gets past it and fails later, as a key that does not parse.
    const pkcs1 = createPrivateKey(PKCS8).export({ type: "pkcs1", format: "pem", cipher: "aes-128-cbc", passphrase: PASS }).toString()
    const reasons = new Map<string, number>()
    for (let i = 0; i < 3000; i++) {
      const reason = keyError(() => loadPrivateKey(pkcs1, { passphrase: `wrong-${i}` })).reason
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    }
    expect(Object.fromEntries(reasons)).toEqual({ "bad-passphrase": 3000 })
  })

  it("refuses a 1024-bit key with WeakKeyError", () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 1024 })
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    for (const load of [() => loadPrivateKey(pem), () => loadPrivateKey(privateKey), () => loadPublicKey(publicKey.export({ type: "spki", format: "pem" }).toString())]) {
      try {
        load()
        throw new Error("expected WeakKeyError")
      } catch (error) {
        expect(error).toBeInstanceOf(WeakKeyError)
        expect((error as WeakKeyError)._tag).toBe("WeakKeyError")
        expect((error as WeakKeyError).bits).toBe(1024)
        expect((error as WeakKeyError).minimumBits).toBe(2048)
      }
    }
  })

  it("refuses public keys, non-RSA keys and garbage with distinct reasons", () => {
    expect(keyError(() => loadPrivateKey(SPKI)).reason).toBe("wrong-key-type")
    expect(keyError(() => loadPrivateKey(loadPublicKey(SPKI).keyObject)).reason).toBe("wrong-key-type")
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey
    expect(keyError(() => loadPrivateKey(ec.export({ type: "pkcs8", format: "pem" }).toString())).reason).toBe("not-rsa")
    expect(keyError(() => loadPrivateKey("not a key")).reason).toBe("unsupported-format")
    expect(keyError(() => loadPrivateKey("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")).reason).toBe("unsupported-format")
  })

  it("never prints key material", () => {
    const key = loadPrivateKey(PKCS8)
    const body = PKCS8.split("\n")[1] as string
    for (const shown of [inspect(key), String(key), JSON.stringify({ key }), inspect({ nested: { key } }, { depth: 5 })]) {
      expect(shown).not.toContain(body.slice(0, 20))
      expect(shown).toContain("<redacted>")
    }
    expect(JSON.stringify({ key })).toBe('{"key":"<redacted>"}')
  })

  it("never puts the passphrase in an error", () => {
    const pem = createPrivateKey(PKCS8).export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: PASS }).toString()
    const error = keyError(() => loadPrivateKey(pem, { passphrase: "hunter2-secret" }))
    expect(`${error.message} ${inspect(error)}`).not.toContain("hunter2-secret")
  })
})

describe("loadPublicKey", () => {
  it("reads SPKI PEM and verifies what the private key signed", () => {
    const pub = loadPublicKey(SPKI)
    expect(pub.bits).toBe(2048)
    const data = Buffer.from("payload")
    expect(verify("sha256", data, pub.keyObject, sign("sha256", data, loadPrivateKey(PKCS8).keyObject))).toBe(true)
    expect(loadPrivateKey(PKCS8).publicKey().toPem()).toBe(pub.toPem())
    expect(inspect(pub)).toBe("RsaPublicKey(2048 bits)")
  })

  it("refuses a private key (swapped configuration) and PKCS#1 public keys", () => {
    expect(keyError(() => loadPublicKey(PKCS8)).reason).toBe("wrong-key-type")
    expect(keyError(() => loadPublicKey(loadPrivateKey(PKCS8).keyObject)).reason).toBe("wrong-key-type")
    const pkcs1Public = loadPublicKey(SPKI).keyObject.export({ type: "pkcs1", format: "pem" }).toString()
    expect(keyError(() => loadPublicKey(pkcs1Public)).reason).toBe("unsupported-format")
  })
})

describe("loadPkcs12PrivateKey", () => {
  const forgeKey = forge.pki.privateKeyFromPem(PKCS8)
  // forge accepts null for "no certificate" ([] crashes it); its typings do not say so.
  const NO_CERT = null as unknown as forge.pki.Certificate
  const p12 = (algorithm: "3des" | "aes256", password: string): Buffer =>
    Buffer.from(forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(forgeKey, NO_CERT, password, { algorithm })).getBytes(), "binary")

  it.each(["3des", "aes256"] as const)("reads a node-forge PKCS#12 (%s) and hands the key to node:crypto", async (algorithm) => {
    const key = await loadPkcs12PrivateKey(p12(algorithm, PASS), PASS)
    expect(key.bits).toBe(2048)
    expect(sameKey(key, loadPrivateKey(PKCS8))).toBe(true)
    expect(inspect(key)).toContain("<redacted>")
  })

  it("reports a wrong password and a non-PKCS#12 input", async () => {
    await expect(loadPkcs12PrivateKey(p12("aes256", PASS), "wrong")).rejects.toMatchObject({ _tag: "KeyFormatError", reason: "bad-passphrase" })
    await expect(loadPkcs12PrivateKey(Buffer.from("not pkcs12"), PASS)).rejects.toMatchObject({ _tag: "KeyFormatError", reason: "unsupported-format" })
  })

  it("refuses a weak key inside PKCS#12", async () => {
    const weak = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 }).privateKey
    const der = Buffer.from(forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(weak, NO_CERT, PASS, { algorithm: "aes256" })).getBytes(), "binary")
    await expect(loadPkcs12PrivateKey(der, PASS)).rejects.toBeInstanceOf(WeakKeyError)
  })

  const hasOpenssl = spawnSync("openssl", ["version"]).status === 0
  it.skipIf(!hasOpenssl)("reads OpenSSL 3 PKCS#12 files (modern AES/PBKDF2 and -legacy), with and without a certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "paykit-p12-"))
    try {
      const keyFile = join(dir, "key.pem")
      writeFileSync(keyFile, PKCS8)
      const run = (...args: Array<string>) => expect(spawnSync("openssl", args, { cwd: dir }).status).toBe(0)
      run("req", "-x509", "-key", keyFile, "-subj", "/CN=paykit-test", "-days", "1", "-out", "cert.pem")
      run("pkcs12", "-export", "-inkey", keyFile, "-in", "cert.pem", "-passout", `pass:${PASS}`, "-out", "modern.p12")
      run("pkcs12", "-export", "-inkey", keyFile, "-nocerts", "-passout", `pass:${PASS}`, "-out", "nocert.p12")
      const legacy = spawnSync("openssl", ["pkcs12", "-export", "-legacy", "-inkey", keyFile, "-in", "cert.pem", "-passout", `pass:${PASS}`, "-out", "legacy.p12"], { cwd: dir })
      const files = ["modern.p12", "nocert.p12", ...(legacy.status === 0 ? ["legacy.p12"] : [])]
      for (const file of files) {
        const key = await loadPkcs12PrivateKey(readFileSync(join(dir, file)), PASS)
        expect(sameKey(key, loadPrivateKey(PKCS8))).toBe(true)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    // Four openssl processes: the timeout only guards against a hang.
  }, 120_000)
})
