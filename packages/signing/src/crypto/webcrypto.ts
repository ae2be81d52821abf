/**
 * The WebCrypto (SubtleCrypto) provider: SHA-1, HMAC-SHA1 and RSASSA-PKCS1-v1_5/SHA-256, and RSA
 * keys imported from PEM. Every function is asynchronous because SubtleCrypto is. Runs wherever
 * `globalThis.crypto.subtle` exists (Node ≥ 19, Bun, Deno, Cloudflare workerd, browsers).
 */
import { KeyFormatError, WeakKeyError } from "../errors"
import { MIN_RSA_BITS } from "../keys"
import { base64, decodeBase64, hex, utf8 } from "./bytes"
import { subtle } from "./runtime"

const REDACTED = "<redacted>"
const INSPECT = Symbol.for("nodejs.util.inspect.custom")
const RSA = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const

function modulusBits(key: CryptoKey): number {
  const bits = (key.algorithm as RsaHashedKeyAlgorithm).modulusLength
  if (typeof bits !== "number") throw new KeyFormatError("not-rsa", "no modulus length")
  if (bits < MIN_RSA_BITS) throw new WeakKeyError(bits, MIN_RSA_BITS)
  return bits
}

/** An RSA private key (≥ 2048 bits) held as a non-extractable WebCrypto `CryptoKey`. Prints as `<redacted>`. */
export class WebCryptoPrivateKey {
  readonly #key: CryptoKey
  /** Modulus length in bits. */
  readonly bits: number

  /**
   * Wraps an imported RSASSA-PKCS1-v1_5/SHA-256 signing key; prefer {@link importPrivateKey}.
   *
   * @throws {KeyFormatError} when it is not a private RSASSA-PKCS1-v1_5 key.
   * @throws {WeakKeyError} when it has fewer than 2048 bits.
   */
  constructor(key: CryptoKey) {
    if (key.type !== "private" || key.algorithm.name !== RSA.name) throw new KeyFormatError("wrong-key-type", "expected an RSASSA-PKCS1-v1_5 private key")
    this.bits = modulusBits(key)
    this.#key = key
  }

  /** The underlying `CryptoKey`. */
  get cryptoKey(): CryptoKey {
    return this.#key
  }

  /** @returns `"<redacted>"`. */
  toJSON(): string {
    return REDACTED
  }

  /** @returns a description without key material. */
  toString(): string {
    return `WebCryptoPrivateKey(${this.bits} bits, ${REDACTED})`
  }

  /** What `console.log` and `util.inspect` show: the same as {@link toString}, never key material. */
  [INSPECT](): string {
    return this.toString()
  }
}

/** An RSA public key (≥ 2048 bits) held as a WebCrypto `CryptoKey`. */
export class WebCryptoPublicKey {
  readonly #key: CryptoKey
  /** Modulus length in bits. */
  readonly bits: number

  /**
   * Wraps an imported RSASSA-PKCS1-v1_5/SHA-256 verification key; prefer {@link importPublicKey}.
   *
   * @throws {KeyFormatError} when it is not a public RSASSA-PKCS1-v1_5 key.
   * @throws {WeakKeyError} when it has fewer than 2048 bits.
   */
  constructor(key: CryptoKey) {
    if (key.type !== "public" || key.algorithm.name !== RSA.name) throw new KeyFormatError("wrong-key-type", "expected an RSASSA-PKCS1-v1_5 public key")
    this.bits = modulusBits(key)
    this.#key = key
  }

  /** The underlying `CryptoKey`. */
  get cryptoKey(): CryptoKey {
    return this.#key
  }

  /** @returns a short description. */
  toString(): string {
    return `WebCryptoPublicKey(${this.bits} bits)`
  }

  /** What `console.log` and `util.inspect` show: the same as {@link toString}, never key material. */
  [INSPECT](): string {
    return this.toString()
  }
}

const PEM = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/

function pemBlock(input: string | Uint8Array): { readonly label: string; readonly headers: boolean; readonly der: Uint8Array } | undefined {
  const text = typeof input === "string" ? input : new TextDecoder().decode(input)
  const match = PEM.exec(text)
  if (match === null) return undefined
  const body = match[2] as string
  // RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`): Base64 has no colon, so one means headers.
  if (body.includes(":")) return { label: match[1] as string, headers: true, der: new Uint8Array(0) }
  const der = decodeBase64(body.replace(/[\r\n\t ]/g, ""))
  return der === undefined ? undefined : { label: match[1] as string, headers: false, der }
}

// DER: a length, then a TLV.
function derLength(length: number): Array<number> {
  if (length < 0x80) return [length]
  const bytes: Array<number> = []
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256)
  return [0x80 | bytes.length, ...bytes]
}

function tlv(tag: number, ...contents: Array<Uint8Array>): Uint8Array {
  const length = contents.reduce((sum, c) => sum + c.length, 0)
  const head = [tag, ...derLength(length)]
  const out = new Uint8Array(head.length + length)
  out.set(head, 0)
  let offset = head.length
  for (const c of contents) {
    out.set(c, offset)
    offset += c.length
  }
  return out
}

// AlgorithmIdentifier { rsaEncryption (1.2.840.113549.1.1.1), NULL }
const RSA_ALGORITHM = new Uint8Array([0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00])

/** PKCS#1 RSAPrivateKey DER → PKCS#8 PrivateKeyInfo DER: version 0, rsaEncryption, the key as an OCTET STRING. */
function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  return tlv(0x30, new Uint8Array([0x02, 0x01, 0x00]), RSA_ALGORITHM, tlv(0x04, pkcs1))
}

/** PKCS#1 RSAPublicKey DER → SPKI DER: rsaEncryption, the key as a BIT STRING with no unused bits. */
function pkcs1ToSpki(pkcs1: Uint8Array): Uint8Array {
  return tlv(0x30, RSA_ALGORITHM, tlv(0x03, new Uint8Array([0x00]), pkcs1))
}

/**
 * Imports an RSA private key into WebCrypto from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) as is, PKCS#1
 * (`BEGIN RSA PRIVATE KEY`) wrapped into PKCS#8 first. The key is imported non-extractable, for
 * RSASSA-PKCS1-v1_5 with SHA-256. Asynchronous, like WebCrypto; works in every runtime.
 *
 * @throws {KeyFormatError} `unsupported-format` (not PEM, or an encrypted key: WebCrypto cannot
 *   decrypt one; decrypt it first, or use `loadPrivateKey` on Node), `wrong-key-type` (a public
 *   key) or `not-rsa`.
 * @throws {WeakKeyError} when the key has fewer than 2048 bits.
 * @throws {CryptoUnavailableError} when the runtime has no WebCrypto.
 */
export async function importPrivateKey(pem: string | Uint8Array): Promise<WebCryptoPrivateKey> {
  const block = pemBlock(pem)
  if (block === undefined) throw new KeyFormatError("unsupported-format", "expected a PEM private key")
  if (block.label.includes("PUBLIC KEY")) throw new KeyFormatError("wrong-key-type", "expected a private key")
  if (block.label === "ENCRYPTED PRIVATE KEY" || block.headers) {
    throw new KeyFormatError("unsupported-format", "an encrypted key cannot be imported into WebCrypto: decrypt it first, or use loadPrivateKey on Node")
  }
  let der: Uint8Array
  if (block.label === "PRIVATE KEY") der = block.der
  else if (block.label === "RSA PRIVATE KEY") der = pkcs1ToPkcs8(block.der)
  else throw new KeyFormatError(block.label.includes("PRIVATE KEY") ? "not-rsa" : "unsupported-format", `PEM label ${block.label.slice(0, 30)}`)
  let key: CryptoKey
  try {
    key = await subtle().importKey("pkcs8", der as BufferSource, RSA, false, ["sign"])
  } catch (error) {
    throw new KeyFormatError(error instanceof Error && /algorithm|rsa/i.test(error.message) ? "not-rsa" : "unsupported-format", "WebCrypto refused the key")
  }
  return new WebCryptoPrivateKey(key)
}

/**
 * Imports an RSA public key into WebCrypto from SPKI PEM (`BEGIN PUBLIC KEY`), or PKCS#1 PEM
 * (`BEGIN RSA PUBLIC KEY`, wrapped into SPKI first). Asynchronous; every runtime.
 *
 * @throws {KeyFormatError} `unsupported-format`, `wrong-key-type` (a private key) or `not-rsa`.
 * @throws {WeakKeyError} when the key has fewer than 2048 bits.
 */
export async function importPublicKey(pem: string | Uint8Array): Promise<WebCryptoPublicKey> {
  const block = pemBlock(pem)
  if (block === undefined) throw new KeyFormatError("unsupported-format", "expected SPKI PEM (BEGIN PUBLIC KEY)")
  if (block.label.includes("PRIVATE KEY")) throw new KeyFormatError("wrong-key-type", "expected a public key")
  let der: Uint8Array
  if (block.label === "PUBLIC KEY") der = block.der
  else if (block.label === "RSA PUBLIC KEY") der = pkcs1ToSpki(block.der)
  else throw new KeyFormatError("unsupported-format", `PEM label ${block.label.slice(0, 30)}`)
  let key: CryptoKey
  try {
    key = await subtle().importKey("spki", der as BufferSource, RSA, true, ["verify"])
  } catch {
    throw new KeyFormatError("not-rsa", "WebCrypto refused the key as RSA")
  }
  return new WebCryptoPublicKey(key)
}

/** Lowercase hex SHA-1 of the UTF-8 bytes of `input`. */
export async function sha1HexWeb(input: string): Promise<string> {
  return hex(await sha1BytesWeb(input))
}

/** SHA-1 of the UTF-8 bytes of `input`. */
export async function sha1BytesWeb(input: string): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest("SHA-1", utf8(input) as BufferSource))
}

function hmacKey(keyText: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return subtle().importKey("raw", utf8(keyText) as BufferSource, { name: "HMAC", hash: "SHA-1" }, false, [usage])
}

/** Base64 HMAC-SHA1 of the base string with the RFC 5849 key string. */
export async function hmacSha1Base64Web(baseString: string, keyText: string): Promise<string> {
  return base64(new Uint8Array(await subtle().sign("HMAC", await hmacKey(keyText, "sign"), utf8(baseString) as BufferSource)))
}

/** HMAC-SHA1 check (SubtleCrypto compares in constant time). A signature it cannot even read is `false`. */
export async function verifyHmacSha1Web(baseString: string, keyText: string, signature: Uint8Array): Promise<boolean> {
  const key = await hmacKey(keyText, "verify")
  try {
    return await subtle().verify("HMAC", key, signature as BufferSource, utf8(baseString) as BufferSource)
  } catch {
    return false
  }
}

/** Base64 RSASSA-PKCS1-v1_5/SHA-256 signature of the base string's UTF-8 bytes. */
export async function rsaSha256Base64Web(baseString: string, key: CryptoKey): Promise<string> {
  return base64(new Uint8Array(await subtle().sign(RSA.name, key, utf8(baseString) as BufferSource)))
}

/**
 * RSASSA-PKCS1-v1_5/SHA-256 check. Some runtimes throw rather than answer `false` for a signature
 * of the wrong length; that is a failed check here, not an error.
 */
export async function verifyRsaSha256Web(data: Uint8Array, key: CryptoKey, signature: Uint8Array): Promise<boolean> {
  const s = subtle()
  try {
    return await s.verify(RSA.name, key, signature as BufferSource, data as BufferSource)
  } catch {
    return false
  }
}
