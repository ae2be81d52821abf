import { createHmac, randomFillSync, sign as rsaSign, verify as rsaVerify, type KeyObject } from "node:crypto"
import { constantTimeEqual } from "../constant-time"
import { InvalidRequestError } from "../errors"
import { RsaPrivateKey } from "../keys"
import { buildBaseString } from "./base-string"
import { authorizationHeader, type OAuthProtocolParams } from "./header"
import { toPairs, type ParamPair, type ParamsInput } from "./params"
import { percentEncode } from "./percent"

/** The two signature methods the payment API uses. */
export type SignatureMethod = "HMAC-SHA1" | "RSA-SHA256"

/** An OAuth token. The payment API never uses one; it exists for general RFC 5849 requests. */
export interface OAuthToken {
  /** The token key (`oauth_token`). */
  readonly key: string
  /** Token secret; enters the HMAC key only. Defaults to "". */
  readonly secret?: string
}

interface SignRequestBase {
  /** HTTP method; the payment API always uses POST (the default). */
  readonly method?: string
  /** The full request URL; its query (if any) is signed too. */
  readonly url: string
  /** The form body as decoded name/value pairs (no `oauth_*` names). */
  readonly params?: ParamsInput
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

/** Per-call inputs; tests and vectors fix them, production leaves them to the defaults. */
export interface OAuthSignOptions {
  /** Defaults to {@link generateNonce}. */
  readonly nonce?: string
  /** Seconds since the epoch; defaults to now. */
  readonly timestamp?: number | string
  /** Goes first in the header (encoded); never signed. */
  readonly realm?: string
}

/** Everything a signature consists of, for sending and for debugging. */
export interface OAuthSignature {
  /** The `Authorization` header value. */
  readonly authorizationHeader: string
  /** The Base64 signature (before header percent-encoding). */
  readonly signature: string
  /** The signature base string that was signed. */
  readonly baseString: string
  /** The base string URI part of it. */
  readonly baseStringUri: string
  /** The normalized parameters part of it. */
  readonly normalizedParameters: string
  /** The protocol parameters, `oauth_signature` included. */
  readonly oauthParams: OAuthProtocolParams
}

const NONCE_BYTES = 24
const POOL_BYTES = NONCE_BYTES * 128
let pool = Buffer.alloc(0)
let poolOffset = POOL_BYTES

/**
 * A fresh nonce: 24 bytes from the CSPRNG as 32 base64url characters (all unreserved, so the
 * nonce needs no encoding). Bytes are drawn from a pooled buffer refilled with `randomFillSync`,
 * which saves a native call per request.
 */
export function generateNonce(): string {
  if (poolOffset + NONCE_BYTES > POOL_BYTES) {
    if (pool.length === 0) pool = Buffer.allocUnsafe(POOL_BYTES)
    randomFillSync(pool)
    poolOffset = 0
  }
  const nonce = pool.toString("base64url", poolOffset, poolOffset + NONCE_BYTES)
  // Wipe the used bytes so a later heap dump cannot replay earlier nonces' randomness.
  pool.fill(0, poolOffset, poolOffset + NONCE_BYTES)
  poolOffset += NONCE_BYTES
  return nonce
}

const DIGITS = /^[0-9]+$/

function timestampString(timestamp: OAuthSignOptions["timestamp"]): string {
  if (timestamp === undefined) return String(Math.floor(Date.now() / 1000))
  const text = typeof timestamp === "number" && Number.isSafeInteger(timestamp) ? String(timestamp) : timestamp
  if (typeof text !== "string" || !DIGITS.test(text)) throw new InvalidRequestError("timestamp", "invalid-value", "expected whole seconds")
  return text
}

// Protocol parameters travel in the header only; one in the body or query would be signed twice.
function checkBodyNames(pairs: ReadonlyArray<ParamPair>): void {
  for (const pair of pairs) {
    if (pair[0].startsWith("oauth_")) throw new InvalidRequestError(pair[0].slice(0, 40), "reserved-name")
  }
}

/** The HMAC-SHA1 key of RFC 5849 §3.4.2. */
export function hmacKey(consumerSecret: string, tokenSecret = ""): string {
  return `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`
}

/** Base64 HMAC-SHA1 of the base string. */
export function hmacSha1Base64(baseString: string, key: string): string {
  return createHmac("sha1", key).update(baseString, "utf8").digest("base64")
}

/** Base64 RSASSA-PKCS1-v1_5 / SHA-256 signature of the base string's UTF-8 bytes. */
export function rsaSha256Base64(baseString: string, key: KeyObject): string {
  return rsaSign("sha256", Buffer.from(baseString, "utf8"), key).toString("base64")
}

/** Constant-time HMAC-SHA1 check of decoded signature bytes. */
export function verifyHmacSha1(baseString: string, key: string, signature: Uint8Array): boolean {
  return constantTimeEqual(createHmac("sha1", key).update(baseString, "utf8").digest(), signature)
}

/** RSA-SHA256 (PKCS#1 v1.5) check of decoded signature bytes with node:crypto. */
export function verifyRsaSha256(data: string | Uint8Array, key: KeyObject, signature: Uint8Array): boolean {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data
  return rsaVerify("sha256", bytes, key, signature)
}

/**
 * Signs a request with OAuth 1.0a (RFC 5849): builds the base string from the URL's query, the
 * form `params` and the protocol parameters, signs it with HMAC-SHA1 (key `enc(consumerSecret)&`)
 * or RSA-SHA256, and formats the `Authorization` header.
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
 */
export function signOAuth(request: OAuthSignRequest, options: OAuthSignOptions = {}): OAuthSignature {
  if (typeof request.consumerKey !== "string" || request.consumerKey === "") throw new InvalidRequestError("consumerKey", "missing")
  const nonce = options.nonce ?? generateNonce()
  if (typeof nonce !== "string" || nonce === "") throw new InvalidRequestError("nonce", "invalid-value")
  const timestamp = timestampString(options.timestamp)
  const bodyPairs = toPairs(request.params)
  checkBodyNames(bodyPairs)

  const protocol: Array<ParamPair> = [
    ["oauth_consumer_key", request.consumerKey],
    ["oauth_nonce", nonce],
    ["oauth_signature_method", request.signatureMethod],
    ["oauth_timestamp", timestamp],
    ["oauth_version", "1.0"]
  ]
  if (request.token !== undefined) protocol.push(["oauth_token", request.token.key])
  const parts = buildBaseString(request.method ?? "POST", request.url, bodyPairs, protocol)
  checkBodyNames(parts.queryPairs)

  let signature: string
  if (request.signatureMethod === "HMAC-SHA1") {
    if (typeof request.consumerSecret !== "string") throw new InvalidRequestError("consumerSecret", "missing")
    signature = hmacSha1Base64(parts.baseString, hmacKey(request.consumerSecret, request.token?.secret ?? ""))
  } else if (request.signatureMethod === "RSA-SHA256") {
    // Only a loaded key: it guarantees RSA, >= 2048 bits, and no PEM re-parse per request.
    if (!(request.privateKey instanceof RsaPrivateKey)) throw new InvalidRequestError("privateKey", "invalid-value", "load it with loadPrivateKey")
    signature = rsaSha256Base64(parts.baseString, request.privateKey.keyObject)
  } else {
    throw new InvalidRequestError("signatureMethod", "invalid-value", "HMAC-SHA1 or RSA-SHA256")
  }

  const oauthParams: OAuthProtocolParams = {
    oauth_consumer_key: request.consumerKey,
    oauth_nonce: nonce,
    oauth_signature: signature,
    oauth_signature_method: request.signatureMethod,
    oauth_timestamp: timestamp,
    ...(request.token === undefined ? {} : { oauth_token: request.token.key }),
    oauth_version: "1.0"
  }
  return {
    authorizationHeader: authorizationHeader(oauthParams, options.realm),
    signature,
    baseString: parts.baseString,
    baseStringUri: parts.baseStringUri,
    normalizedParameters: parts.normalizedParameters,
    oauthParams
  }
}
