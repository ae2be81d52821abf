import { requireNodeCrypto } from "./crypto/runtime"
import { KeyFormatError } from "./errors"
import { RsaPrivateKey } from "./keys"

type Forge = typeof import("node-forge")

let forgePromise: Promise<Forge> | undefined

// node-forge costs ~40 ms to import and is needed only here, so it is loaded on first use and
// never sits on the signing path.
function loadForge(): Promise<Forge> {
  forgePromise ??= import("node-forge").then((m) => ((m as { default?: Forge }).default ?? m) as Forge)
  return forgePromise
}

/**
 * Loads the RSA private key of a PKCS#12 (`.p12`/`.pfx`) file. node-forge parses the container
 * (node:crypto cannot); the key is then handed to node:crypto as PKCS#8 DER, so signing runs on
 * OpenSSL like every other key.
 *
 * Asynchronous only because node-forge is imported lazily.
 *
 * @throws {KeyFormatError} `bad-passphrase` (MAC or decryption fails), `key-count` (no private
 *   key or several), `not-rsa`, or `unsupported-format`.
 * @throws {WeakKeyError} when the key has fewer than 2048 bits.
 */
export async function loadPkcs12PrivateKey(pkcs12: Uint8Array, passphrase: string): Promise<RsaPrivateKey> {
  requireNodeCrypto()
  const forge = await loadForge()
  let p12: import("node-forge").pkcs12.Pkcs12Pfx
  try {
    const der = forge.util.createBuffer(Buffer.from(pkcs12.buffer, pkcs12.byteOffset, pkcs12.byteLength).toString("binary"))
    const asn1 = forge.asn1.fromDer(der)
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, passphrase)
  } catch (error) {
    const message = error instanceof Error ? error.message : ""
    // forge reports a wrong password as a MAC failure or, without a MAC, as a decryption failure.
    if (/mac could not be verified|invalid password|decrypt/i.test(message)) throw new KeyFormatError("bad-passphrase")
    throw new KeyFormatError("unsupported-format", "not a PKCS#12 file node-forge can read")
  }
  const oids = forge.pki.oids
  const shrouded = p12.getBags({ bagType: oids["pkcs8ShroudedKeyBag"] as string })[oids["pkcs8ShroudedKeyBag"] as string] ?? []
  const plain = p12.getBags({ bagType: oids["keyBag"] as string })[oids["keyBag"] as string] ?? []
  const bags = [...shrouded, ...plain]
  if (bags.length !== 1) throw new KeyFormatError("key-count", `${bags.length} private keys`)
  const key = (bags[0] as { key?: import("node-forge").pki.PrivateKey }).key
  // forge leaves `key` unset when it cannot decrypt the bag or the key is not RSA.
  if (key === undefined || key === null) throw new KeyFormatError("not-rsa", "the key bag is not an RSA key node-forge can decrypt")
  const pkcs8 = forge.asn1.toDer(forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(key))).getBytes()
  try {
    return new RsaPrivateKey(requireNodeCrypto().createPrivateKey({ key: Buffer.from(pkcs8, "binary"), format: "der", type: "pkcs8" }))
  } catch (error) {
    if (error instanceof Error && "_tag" in error) throw error
    throw new KeyFormatError("unsupported-format", "PKCS#12 key rejected by node:crypto")
  }
}
