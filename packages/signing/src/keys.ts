import type { KeyObject } from "node:crypto"
import { nodeCrypto, requireNodeCrypto } from "./crypto/runtime"
import { KeyFormatError, WeakKeyError } from "./errors"

// `util.inspect.custom`, without importing node:util (the package loads where it is missing).
const INSPECT = Symbol.for("nodejs.util.inspect.custom")

function isKeyObject(value: unknown): value is KeyObject {
  const node = nodeCrypto()
  return node !== undefined && value instanceof node.KeyObject
}

/** The smallest RSA modulus the interface allows for signing keys (§5.2 item 6, §8). */
export const MIN_RSA_BITS = 2048

const REDACTED = "<redacted>"

function rsaBits(key: KeyObject): number {
  if (key.asymmetricKeyType !== "rsa") throw new KeyFormatError("not-rsa", `key type ${String(key.asymmetricKeyType)}`)
  const bits = key.asymmetricKeyDetails?.modulusLength
  if (bits === undefined) throw new KeyFormatError("not-rsa", "no modulus length")
  if (bits < MIN_RSA_BITS) throw new WeakKeyError(bits, MIN_RSA_BITS)
  return bits
}

/**
 * An RSA private key of at least 2048 bits, parsed once into a `KeyObject` so signing never
 * re-parses PEM. Printing, logging or JSON-serialising it shows `<redacted>`.
 */
export class RsaPrivateKey {
  readonly #key: KeyObject
  /** Modulus length in bits. */
  readonly bits: number

  /**
   * Wraps a private `KeyObject`; prefer {@link loadPrivateKey}.
   *
   * @throws {KeyFormatError} when the key is not an RSA private key.
   * @throws {WeakKeyError} when it has fewer than 2048 bits.
   */
  constructor(key: KeyObject) {
    if (!isKeyObject(key) || key.type !== "private") throw new KeyFormatError("wrong-key-type", "expected a private key")
    this.bits = rsaBits(key)
    this.#key = key
  }

  /** The underlying `KeyObject`, for callers that sign with `node:crypto` directly. */
  get keyObject(): KeyObject {
    return this.#key
  }

  /** The matching public key. */
  publicKey(): RsaPublicKey {
    return new RsaPublicKey(requireNodeCrypto().createPublicKey(this.#key))
  }

  /** @returns `"<redacted>"`, so the key never lands in JSON logs. */
  toJSON(): string {
    return REDACTED
  }

  /** @returns a description without key material. */
  toString(): string {
    return `RsaPrivateKey(${this.bits} bits, ${REDACTED})`
  }

  /** Keeps `console.log` and `util.inspect` from showing anything but the size. */
  [INSPECT](): string {
    return this.toString()
  }
}

/** An RSA public key of at least 2048 bits, parsed once. */
export class RsaPublicKey {
  readonly #key: KeyObject
  /** Modulus length in bits. */
  readonly bits: number

  /**
   * Wraps a public `KeyObject`; prefer {@link loadPublicKey}.
   *
   * @throws {KeyFormatError} when the key is not an RSA public key.
   * @throws {WeakKeyError} when it has fewer than 2048 bits.
   */
  constructor(key: KeyObject) {
    if (!isKeyObject(key) || key.type !== "public") throw new KeyFormatError("wrong-key-type", "expected a public key")
    this.bits = rsaBits(key)
    this.#key = key
  }

  /** The underlying `KeyObject`. */
  get keyObject(): KeyObject {
    return this.#key
  }

  /** The public key as SPKI PEM. */
  toPem(): string {
    return this.#key.export({ type: "spki", format: "pem" }).toString()
  }

  /** @returns a short description; public keys are not secret but are long. */
  toString(): string {
    return `RsaPublicKey(${this.bits} bits)`
  }

  /** Prints the size only. */
  [INSPECT](): string {
    return this.toString()
  }
}

/** Options of {@link loadPrivateKey}. */
export interface LoadPrivateKeyOptions {
  /** Passphrase of an encrypted PEM (PKCS#8 `ENCRYPTED PRIVATE KEY` or PKCS#1 `Proc-Type: 4,ENCRYPTED`). */
  readonly passphrase?: string
}

const ENCRYPTED_PEM = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/

function nodeErrorCode(error: unknown): string {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : ""
}

function asText(input: string | Uint8Array): string {
  return typeof input === "string" ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString("latin1")
}

/**
 * Loads an RSA private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`), encrypted PKCS#8
 * (`BEGIN ENCRYPTED PRIVATE KEY`), or PKCS#1 (`BEGIN RSA PRIVATE KEY`, optionally encrypted).
 * A `KeyObject` is accepted as is. For PKCS#12 use {@link loadPkcs12PrivateKey}. Synchronous, on
 * `node:crypto`; where that is missing, `importPrivateKey` loads PKCS#8/PKCS#1 PEM into WebCrypto.
 *
 * @throws {KeyFormatError} `passphrase-required`, `bad-passphrase`, `wrong-key-type` (a public
 *   key), `not-rsa` or `unsupported-format`.
 * @throws {CryptoUnavailableError} where `node:crypto` is missing.
 * @throws {WeakKeyError} when the key has fewer than 2048 bits.
 */
export function loadPrivateKey(input: string | Uint8Array | KeyObject, options: LoadPrivateKeyOptions = {}): RsaPrivateKey {
  if (isKeyObject(input)) return new RsaPrivateKey(input)
  const { createPrivateKey } = requireNodeCrypto()
  const text = asText(input)
  if (!text.includes("PRIVATE KEY-----")) {
    throw text.includes("PUBLIC KEY-----")
      ? new KeyFormatError("wrong-key-type", "expected a private key")
      : new KeyFormatError("unsupported-format", "expected a PEM private key")
  }
  // Checked up front: without a passphrase OpenSSL's error code varies by version.
  if (options.passphrase === undefined && ENCRYPTED_PEM.test(text)) throw new KeyFormatError("passphrase-required")
  let key: KeyObject
  try {
    key = createPrivateKey(options.passphrase === undefined
      ? { key: text, format: "pem" }
      : { key: text, format: "pem", passphrase: options.passphrase })
  } catch (error) {
    const code = nodeErrorCode(error)
    if (code === "ERR_MISSING_PASSPHRASE" || code === "ERR_OSSL_CRYPTO_INTERRUPTED_OR_CANCELLED") throw new KeyFormatError("passphrase-required")
    if (code === "ERR_OSSL_BAD_DECRYPT" || code === "ERR_OSSL_EVP_BAD_DECRYPT") throw new KeyFormatError("bad-passphrase")
    // A wrong passphrase passes the cipher's padding check about once in 256 tries and then fails as
    // a DER parse; an encrypted PEM cannot be judged past its passphrase, so that is the reason.
    if (options.passphrase !== undefined && ENCRYPTED_PEM.test(text)) throw new KeyFormatError("bad-passphrase", code || undefined)
    throw new KeyFormatError("unsupported-format", code || undefined)
  }
  return new RsaPrivateKey(key)
}

/**
 * Loads an RSA public key from SPKI PEM (`BEGIN PUBLIC KEY`) or a public `KeyObject`. A private
 * key is refused rather than silently reduced to its public half, to catch swapped configuration.
 *
 * @throws {KeyFormatError} `wrong-key-type`, `not-rsa` or `unsupported-format`.
 * @throws {WeakKeyError} when the key has fewer than 2048 bits.
 */
export function loadPublicKey(input: string | Uint8Array | KeyObject): RsaPublicKey {
  if (isKeyObject(input)) return new RsaPublicKey(input)
  const { createPublicKey } = requireNodeCrypto()
  const text = asText(input)
  if (!text.includes("-----BEGIN PUBLIC KEY-----")) {
    throw text.includes("PRIVATE KEY-----")
      ? new KeyFormatError("wrong-key-type", "expected a public key")
      : new KeyFormatError("unsupported-format", "expected SPKI PEM (BEGIN PUBLIC KEY)")
  }
  let key: KeyObject
  try {
    key = createPublicKey({ key: text, format: "pem", type: "spki" })
  } catch (error) {
    throw new KeyFormatError("unsupported-format", nodeErrorCode(error) || undefined)
  }
  return new RsaPublicKey(key)
}
