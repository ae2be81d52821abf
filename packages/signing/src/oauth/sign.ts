/**
 * OAuth 1.0a signing on `node:crypto` (synchronous). The asynchronous, WebCrypto-capable
 * counterparts are in `sign-async.ts`.
 */
import type { KeyObject } from "node:crypto"
import { constantTimeEqual } from "../constant-time"
import { requireNodeCrypto } from "../crypto/runtime"
import { InvalidRequestError } from "../errors"
import { RsaPrivateKey } from "../keys"
import {
  finishSignature,
  hmacKey,
  prepareConsumer,
  prepareRequest,
  type OAuthSignature,
  type OAuthSignerRequest,
  type OAuthSignOptions,
  type OAuthToken,
  type PreparedConsumer,
  type SignatureMethod
} from "./prepare"

export { generateNonce, hmacKey, type OAuthSignature, type OAuthSignerRequest, type OAuthSignOptions, type OAuthToken, type SignatureMethod } from "./prepare"

interface SignRequestBase extends OAuthSignerRequest {
  /** `oauth_consumer_key`: the merchant login. */
  readonly consumerKey: string
  /** The OAuth token, if any (the payment API uses none). */
  readonly token?: OAuthToken
}

/** A request to sign with HMAC-SHA1 (payout, payout-form, pan-eligibility). */
export interface HmacSha1SignRequest extends SignRequestBase {
  /** Selects HMAC-SHA1. */
  readonly signatureMethod: "HMAC-SHA1"
  /** The merchant control key; the HMAC key is `enc(consumerSecret)&enc(token secret)`. */
  readonly consumerSecret: string
}

/** A request to sign with RSA-SHA256, PKCS#1 v1.5 (the v4 operations). */
export interface RsaSha256SignRequest extends SignRequestBase {
  /** Selects RSA-SHA256. */
  readonly signatureMethod: "RSA-SHA256"
  /** The merchant's private key, loaded once with `loadPrivateKey`. */
  readonly privateKey: RsaPrivateKey
}

/** A request {@link signOAuth} can sign. */
export type OAuthSignRequest = HmacSha1SignRequest | RsaSha256SignRequest

/** Base64 HMAC-SHA1 of the base string (key: the RFC 5849 key string, or a prepared secret `KeyObject`). */
export function hmacSha1Base64(baseString: string, key: string | KeyObject): string {
  return requireNodeCrypto().createHmac("sha1", key).update(baseString, "utf8").digest("base64")
}

/** Base64 RSASSA-PKCS1-v1_5 / SHA-256 signature of the base string's UTF-8 bytes. */
export function rsaSha256Base64(baseString: string, key: KeyObject): string {
  const node = requireNodeCrypto()
  return node.sign("sha256", Buffer.from(baseString, "utf8"), key).toString("base64")
}

/** Constant-time HMAC-SHA1 check of decoded signature bytes. */
export function verifyHmacSha1(baseString: string, key: string, signature: Uint8Array): boolean {
  return constantTimeEqual(requireNodeCrypto().createHmac("sha1", key).update(baseString, "utf8").digest(), signature)
}

/** RSA-SHA256 (PKCS#1 v1.5) check of decoded signature bytes with node:crypto. */
export function verifyRsaSha256(data: string | Uint8Array, key: KeyObject, signature: Uint8Array): boolean {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data
  return requireNodeCrypto().verify("sha256", bytes, key, signature)
}

/**
 * HMAC-SHA1 (RFC 2104) with the key prepared once: the inner and outer pads are computed here, so
 * each signature is two one-shot `crypto.hash` calls instead of building an `Hmac` object (which
 * validates and imports the key on every call). The inner pad is passed as text together with the
 * base string, which is exact because both are ASCII: the key is `enc(..)&enc(..)` and the base
 * string is percent-encoded throughout. Where `crypto.hash` is missing, or a key longer than the
 * block makes the pads non-ASCII, a secret `KeyObject` with `createHmac` does the same.
 */
function preparedHmacSha1(keyText: string): (baseString: string) => string {
  const node = requireNodeCrypto()
  const hash = node.hash
  const keyBytes = Buffer.from(keyText, "utf8")
  if (typeof hash !== "function" || keyBytes.length > 64) {
    const key = node.createSecretKey(keyBytes)
    return (baseString) => node.createHmac("sha1", key).update(baseString, "utf8").digest("base64")
  }
  const innerPad = Buffer.alloc(64, 0x36)
  // The outer hash's input: the outer pad, then the inner digest (written per call).
  const outer = Buffer.alloc(84, 0x5c)
  for (let i = 0; i < keyBytes.length; i++) {
    innerPad[i] = (innerPad[i] as number) ^ (keyBytes[i] as number)
    outer[i] = (outer[i] as number) ^ (keyBytes[i] as number)
  }
  const innerPadText = innerPad.toString("latin1")
  innerPad.fill(0)
  keyBytes.fill(0)
  return (baseString) => {
    // The inner digest as "binary" (latin1) text, one char per byte, is written into place with no Buffer
    // allocated per call; a Buffer per digest costs more than the hashing.
    outer.write(hash("sha1", innerPadText + baseString, "binary"), 64, 20, "binary")
    return hash("sha1", outer, "base64")
  }
}

function checkMethod(method: unknown): SignatureMethod {
  if (method === "HMAC-SHA1" || method === "RSA-SHA256") return method
  throw new InvalidRequestError("signatureMethod", "invalid-value", "HMAC-SHA1 or RSA-SHA256")
}

/** Only a loaded key: it guarantees RSA, >= 2048 bits, and no PEM re-parse per request. */
function checkPrivateKey(privateKey: unknown): RsaPrivateKey {
  if (!(privateKey instanceof RsaPrivateKey)) throw new InvalidRequestError("privateKey", "invalid-value", "load it with loadPrivateKey")
  return privateKey
}

/**
 * Signs a request with OAuth 1.0a (RFC 5849): builds the base string from the URL's query, the
 * form `params` and the protocol parameters, signs it with HMAC-SHA1 (key `enc(consumerSecret)&`)
 * or RSA-SHA256, and formats the `Authorization` header. Synchronous, on `node:crypto`; where that
 * is missing use `signOAuthAsync`. To sign many requests with one key, {@link createHmacSigner} /
 * {@link createRsaSigner} prepare the key and consumer once.
 *
 * @example
 * const { authorizationHeader } = signOAuth({
 *   url: "https://sandbox.example.com/paynet/api/v4/payout/1234",
 *   params: [["client_orderid", "ord-5001"], ["amount", "100.00"]],
 *   consumerKey: "merchant-login", signatureMethod: "HMAC-SHA1", consumerSecret: controlKey
 * })
 *
 * @throws {InvalidRequestError} for a bad URL or method, an `oauth_*` name among the params or
 *   query, a non-string value, a lone surrogate, an empty consumer key or a bad nonce/timestamp.
 * @throws {CryptoUnavailableError} where `node:crypto` is missing.
 */
export function signOAuth(request: OAuthSignRequest, options: OAuthSignOptions = {}): OAuthSignature {
  const method = checkMethod(request.signatureMethod)
  const consumer = prepareConsumer(request.consumerKey, method, request.token)
  if (method === "HMAC-SHA1") {
    const secret = (request as HmacSha1SignRequest).consumerSecret
    if (typeof secret !== "string") throw new InvalidRequestError("consumerSecret", "missing")
    const prepared = prepareRequest(consumer, request, options)
    return finishSignature(consumer, prepared, hmacSha1Base64(prepared.baseString, hmacKey(secret, request.token?.secret ?? "")), options.realm)
  }
  const key = checkPrivateKey((request as RsaSha256SignRequest).privateKey)
  const prepared = prepareRequest(consumer, request, options)
  return finishSignature(consumer, prepared, rsaSha256Base64(prepared.baseString, key.keyObject), options.realm)
}

/**
 * A signer bound to one consumer and key, prepared once: the consumer key's protocol parameters
 * are encoded once and the key is loaded once, so each `sign` does only the per-request work.
 * Printing or serialising it shows no key.
 */
export interface OAuthSigner {
  /** The signature method it signs with. */
  readonly signatureMethod: SignatureMethod
  /** The consumer key (merchant login) it signs as. */
  readonly consumerKey: string
  /**
   * Signs one request, synchronously on `node:crypto`.
   *
   * @throws {InvalidRequestError} as {@link signOAuth} does.
   * @throws {CryptoUnavailableError} where `node:crypto` is missing (use `signOAuthAsync`).
   */
  sign(request: OAuthSignerRequest, options?: OAuthSignOptions): OAuthSignature
}

/** Options of {@link createHmacSigner}. */
export interface HmacSignerOptions {
  /** `oauth_consumer_key`: the merchant login. */
  readonly consumerKey: string
  /** The merchant control key. */
  readonly consumerSecret: string
  /** The OAuth token, if any (the payment API uses none). */
  readonly token?: OAuthToken
}

/** Options of {@link createRsaSigner}. */
export interface RsaSignerOptions {
  /** `oauth_consumer_key`: the merchant login. */
  readonly consumerKey: string
  /** The merchant's private key, loaded once with `loadPrivateKey`. */
  readonly privateKey: RsaPrivateKey
  /** The OAuth token, if any (the payment API uses none). */
  readonly token?: OAuthToken
}

const REDACTED = "<redacted>"
const INSPECT = Symbol.for("nodejs.util.inspect.custom")

class Signer implements OAuthSigner {
  readonly signatureMethod: SignatureMethod
  readonly consumerKey: string
  readonly #consumer: PreparedConsumer
  readonly #sign: (baseString: string) => string

  constructor(consumer: PreparedConsumer, sign: (baseString: string) => string) {
    this.signatureMethod = consumer.signatureMethod
    this.consumerKey = consumer.consumerKey
    this.#consumer = consumer
    this.#sign = sign
  }

  sign(request: OAuthSignerRequest, options: OAuthSignOptions = {}): OAuthSignature {
    const prepared = prepareRequest(this.#consumer, request, options)
    return finishSignature(this.#consumer, prepared, this.#sign(prepared.baseString), options.realm)
  }

  /** @returns a description without key material. */
  toString(): string {
    return `OAuthSigner(${this.signatureMethod}, ${REDACTED})`
  }

  /** @returns `"<redacted>"`. */
  toJSON(): string {
    return REDACTED
  }

  [INSPECT](): string {
    return this.toString()
  }
}

/**
 * An HMAC-SHA1 signer for one merchant: the key `enc(consumerSecret)&enc(token secret)` is
 * prepared once (its HMAC pads), and the consumer's protocol parameters are encoded once.
 * Synchronous, on `node:crypto`. Signatures equal {@link signOAuth}'s.
 *
 * @example
 * const signer = createHmacSigner({ consumerKey: "merchant-login", consumerSecret: controlKey })
 * const { authorizationHeader } = signer.sign({ url, params: [["client_orderid", "ord-5001"], ["amount", "100.00"]] })
 *
 * @throws {InvalidRequestError} for an empty consumer key or a non-string secret.
 * @throws {CryptoUnavailableError} where `node:crypto` is missing (use `signOAuthAsync` there).
 */
export function createHmacSigner(options: HmacSignerOptions): OAuthSigner {
  const consumer = prepareConsumer(options.consumerKey, "HMAC-SHA1", options.token)
  if (typeof options.consumerSecret !== "string") throw new InvalidRequestError("consumerSecret", "missing")
  const keyText = hmacKey(options.consumerSecret, options.token?.secret ?? "")
  return new Signer(consumer, preparedHmacSha1(keyText))
}

/**
 * An RSA-SHA256 signer for one merchant: the consumer's protocol parameters are encoded once.
 * Signatures equal {@link signOAuth}'s.
 *
 * @throws {InvalidRequestError} for an empty consumer key or a key not loaded with `loadPrivateKey`.
 */
export function createRsaSigner(options: RsaSignerOptions): OAuthSigner {
  const consumer = prepareConsumer(options.consumerKey, "RSA-SHA256", options.token)
  const key = checkPrivateKey(options.privateKey)
  const keyObject = key.keyObject
  return new Signer(consumer, (baseString) => rsaSha256Base64(baseString, keyObject))
}
