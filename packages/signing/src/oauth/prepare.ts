/**
 * Everything of an OAuth signature except the cryptographic step: protocol parameters, base
 * string and `Authorization` header. Pure string work, shared by the synchronous (node:crypto)
 * and asynchronous (WebCrypto) signers.
 */
import { base64url } from "../crypto/bytes"
import { randomBytesInto } from "../crypto/runtime"
import { InvalidRequestError } from "../errors"
import { encodedParametersOf, encodedParams, encodeTwice, methodOf, pushEncoded, pushParams, urlParts, normalizedOf, type AssembledBaseString, type EncodedParams } from "./base-string"
import type { OAuthProtocolParams } from "./header"
import type { ParamsInput } from "./params"
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

/** The request a signer signs: where it goes and its form body. */
export interface OAuthSignerRequest {
  /** HTTP method; the payment API always uses POST (the default). */
  readonly method?: string
  /** The full request URL; its query (if any) is signed too. */
  readonly url: string
  /** The form body as decoded name/value pairs (no `oauth_*` names). */
  readonly params?: ParamsInput
}

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
const NONCE_CHARS = 32
const POOL_NONCES = 128
let noncePool = ""
let nonceOffset = 0

/**
 * A fresh nonce: 24 bytes from the CSPRNG as 32 base64url characters (all unreserved, so the
 * nonce needs no encoding). 128 nonces' worth of random bytes are drawn and encoded at once, and
 * the bytes wiped right after, which saves a native call and an encoding per request.
 */
export function generateNonce(): string {
  if (nonceOffset >= noncePool.length) {
    const bytes = randomBytesInto(new Uint8Array(NONCE_BYTES * POOL_NONCES))
    // Node's and Bun's Buffer encode natively; elsewhere the portable encoder does it.
    const NodeBuffer = (globalThis as { Buffer?: { from(b: ArrayBuffer, o: number, l: number): { toString(e: string): string } } }).Buffer
    noncePool = NodeBuffer === undefined ? base64url(bytes) : NodeBuffer.from(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength).toString("base64url")
    bytes.fill(0)
    nonceOffset = 0
  }
  const nonce = noncePool.slice(nonceOffset, nonceOffset + NONCE_CHARS)
  nonceOffset += NONCE_CHARS
  return nonce
}

const DIGITS = /^[0-9]+$/
let lastSecond = -1
let lastSecondText = ""

function timestampString(timestamp: OAuthSignOptions["timestamp"]): string {
  if (timestamp === undefined) {
    const now = Math.floor(Date.now() / 1000)
    if (now !== lastSecond) {
      lastSecond = now
      lastSecondText = String(now)
    }
    return lastSecondText
  }
  const text = typeof timestamp === "number" && Number.isSafeInteger(timestamp) ? String(timestamp) : timestamp
  if (typeof text !== "string" || !DIGITS.test(text)) throw new InvalidRequestError("timestamp", "invalid-value", "expected whole seconds")
  return text
}

/** A consumer's protocol parameters that do not change per request, encoded once. */
export interface PreparedConsumer {
  readonly consumerKey: string
  readonly tokenKey: string | undefined
  /** `enc(consumerKey)`. */
  readonly encodedConsumerKey: string
  /** `oauth_consumer_key`, `oauth_signature_method`, `oauth_version` and `oauth_token`, encoded. */
  readonly fixedParams: EncodedParams
  readonly signatureMethod: SignatureMethod
  /** The header from after `OAuth ` / the realm up to the nonce's value: `oauth_consumer_key="…", oauth_nonce="`. */
  readonly headerStart: string
  /** The header between the signature and the timestamp's value. */
  readonly headerMiddle: string
  /** The header after the timestamp's value: the token, if any, and the version. */
  readonly headerEnd: string
}

/**
 * Checks and encodes a consumer once.
 *
 * @throws {InvalidRequestError} for an empty consumer key or a bad token key.
 */
export function prepareConsumer(consumerKey: string, signatureMethod: SignatureMethod, token: OAuthToken | undefined): PreparedConsumer {
  if (typeof consumerKey !== "string" || consumerKey === "") throw new InvalidRequestError("consumerKey", "missing")
  const tokenKey = token?.key
  if (tokenKey !== undefined && typeof tokenKey !== "string") throw new InvalidRequestError("token.key", "not-a-string")
  // oauth_nonce and oauth_timestamp are appended per request; they sort between these.
  const fixed: Array<[string, string]> = [["oauth_consumer_key", consumerKey], ["oauth_signature_method", signatureMethod], ["oauth_version", "1.0"]]
  if (tokenKey !== undefined) fixed.splice(2, 0, ["oauth_token", tokenKey])
  const fixedParams = encodedParams()
  pushParams(fixed, fixedParams, false)
  return {
    consumerKey,
    tokenKey,
    encodedConsumerKey: percentEncode(consumerKey),
    fixedParams,
    signatureMethod,
    // The header's names are fixed, so their sorted order is written out once.
    headerStart: `oauth_consumer_key="${percentEncode(consumerKey)}", oauth_nonce="`,
    headerMiddle: `", oauth_signature_method="${signatureMethod}", oauth_timestamp="`,
    headerEnd: `"${tokenKey === undefined ? "" : `, oauth_token="${percentEncode(tokenKey)}"`}, oauth_version="1.0"`
  }
}

/** A request ready for its signature: its base string and parts, and its nonce and timestamp. */
interface PreparedRequest extends AssembledBaseString {
  readonly nonce: string
  readonly encodedNonce: string
  readonly timestamp: string
}

/**
 * Builds the base string of a request: every name and value encoded once, sorted without
 * re-encoding, joined in one pass.
 *
 * @throws {InvalidRequestError} for a bad URL or method, an `oauth_*` name among the params or
 *   query, a non-string value, a lone surrogate or a bad nonce/timestamp.
 */
export function prepareRequest(consumer: PreparedConsumer, request: OAuthSignerRequest, options: OAuthSignOptions): PreparedRequest {
  const given = options.nonce
  if (given !== undefined && (typeof given !== "string" || given === "")) throw new InvalidRequestError("nonce", "invalid-value")
  // A generated nonce is base64url, all unreserved: nothing to encode.
  const nonce = given ?? generateNonce()
  const encodedNonce = given === undefined ? nonce : percentEncode(nonce)
  const nonceParam = given === undefined ? nonce : encodeTwice(nonce)
  const timestamp = timestampString(options.timestamp)
  const method = methodOf(request.method)
  const url = urlParts(request.url)
  if (url.queryHasProtocolName) {
    for (const pair of url.queryPairs) if (pair[0].startsWith("oauth_")) throw new InvalidRequestError(pair[0].slice(0, 40), "reserved-name")
  }
  const params = encodedParams()
  pushParams(request.params, params, true)
  pushEncoded(consumer.fixedParams, params)
  params.names.push("oauth_nonce", "oauth_timestamp")
  params.values.push(nonceParam, timestamp)
  const encoded = encodedParametersOf(url, params)
  return { baseStringUri: url.baseUri, encodedParameters: encoded, baseString: `${method}&${url.encodedBaseUri}&${encoded}`, nonce, encodedNonce, timestamp }
}

/** Formats the result once the signature of `prepared.baseString` is known. */
export function finishSignature(consumer: PreparedConsumer, prepared: PreparedRequest, signature: string, realm: string | undefined): OAuthSignature {
  // Base64 holds no character encodeURIComponent leaves that RFC 5849 encodes: it is `enc()` here.
  const header = (realm === undefined ? "OAuth " : `OAuth realm="${percentEncode(realm)}", `) + consumer.headerStart + prepared.encodedNonce +
    '", oauth_signature="' + encodeURIComponent(signature) + consumer.headerMiddle + prepared.timestamp + consumer.headerEnd
  return new Signature(header, signature, prepared, consumer)
}

/**
 * An {@link OAuthSignature}. A class so that `normalizedParameters` and `oauthParams`, which
 * sending the request does not need, are built only when read (an object literal with getters is
 * slow to create); `toJSON` still shows them.
 */
class Signature implements OAuthSignature {
  readonly authorizationHeader: string
  readonly signature: string
  readonly baseString: string
  readonly baseStringUri: string
  readonly #prepared: PreparedRequest
  readonly #consumer: PreparedConsumer

  constructor(header: string, signature: string, prepared: PreparedRequest, consumer: PreparedConsumer) {
    this.authorizationHeader = header
    this.signature = signature
    this.baseString = prepared.baseString
    this.baseStringUri = prepared.baseStringUri
    this.#prepared = prepared
    this.#consumer = consumer
  }

  get normalizedParameters(): string {
    return normalizedOf(this.#prepared.encodedParameters)
  }

  get oauthParams(): OAuthProtocolParams {
    const consumer = this.#consumer
    const prepared = this.#prepared
    const common = {
      oauth_consumer_key: consumer.consumerKey,
      oauth_nonce: prepared.nonce,
      oauth_signature: this.signature,
      oauth_signature_method: consumer.signatureMethod,
      oauth_timestamp: prepared.timestamp
    }
    return consumer.tokenKey === undefined
      ? { ...common, oauth_version: "1.0" }
      : { ...common, oauth_token: consumer.tokenKey, oauth_version: "1.0" }
  }

  toJSON(): OAuthSignature {
    return {
      authorizationHeader: this.authorizationHeader,
      signature: this.signature,
      baseString: this.baseString,
      baseStringUri: this.baseStringUri,
      normalizedParameters: this.normalizedParameters,
      oauthParams: this.oauthParams
    }
  }
}

/** The HMAC-SHA1 key of RFC 5849 §3.4.2: `enc(consumer secret)&enc(token secret)`. */
export function hmacKey(consumerSecret: string, tokenSecret = ""): string {
  return `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`
}
