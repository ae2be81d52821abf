/**
 * The asynchronous API: the same digests and signatures as the synchronous functions, returned as
 * Promises, on `node:crypto` where it exists and on WebCrypto elsewhere (or as `crypto` says).
 * This is the API for Cloudflare workerd, browsers and any runtime without `node:crypto`.
 */
import { concatenation, controlFailure, receivedControl, type ControlOptions, type ControlScheme, type ControlValues, type ControlVerifyResult } from "./control"
import { callbackConcatenation, type CallbackControlValues } from "./callback"
import { constantTimeEqualBytes } from "./crypto/bytes"
import { providerOf, requireNodeCrypto, type CryptoOptions } from "./crypto/runtime"
import { hmacSha1Base64Web, rsaSha256Base64Web, sha1BytesWeb, sha1HexWeb, WebCryptoPrivateKey, WebCryptoPublicKey } from "./crypto/webcrypto"
import { InvalidRequestError } from "./errors"
import { sha1Bytes, sha1Hex } from "./hash"
import { RsaPrivateKey, RsaPublicKey } from "./keys"
import { controlSchemeOf, type OperationControlOptions } from "./operation-control"
import { finishSignature, hmacKey, prepareConsumer, prepareRequest, type OAuthSignature, type OAuthSignOptions } from "./oauth/prepare"
import { hmacSha1Base64, rsaSha256Base64, type HmacSha1SignRequest } from "./oauth/sign"
import type { OperationId } from "@paykit/contracts/operations"

async function digestHex(input: string, options: CryptoOptions | undefined): Promise<string> {
  return providerOf(options) === "node" ? sha1Hex(input) : sha1HexWeb(input)
}

async function digestBytes(input: string, options: CryptoOptions | undefined): Promise<Uint8Array> {
  return providerOf(options) === "node" ? sha1Bytes(input) : sha1BytesWeb(input)
}

async function compareAsync(expected: Promise<Uint8Array>, received: string | undefined): Promise<ControlVerifyResult> {
  const checked = receivedControl(received)
  if (!(checked instanceof Uint8Array)) return checked
  return constantTimeEqualBytes(await expected, checked) ? { ok: true } : controlFailure("mismatch")
}

/**
 * Asynchronous {@link controlDigest}: the same digest, on `node:crypto` where it exists, else
 * WebCrypto (or as `options.crypto` says). Input errors reject the Promise with the same typed
 * errors `controlDigest` throws.
 */
export async function controlDigestAsync(scheme: ControlScheme, values: ControlValues, key: string, options: ControlOptions & CryptoOptions = {}): Promise<string> {
  return digestHex(concatenation(scheme, values, key, options), options)
}

/** Asynchronous {@link verifyControl}. */
export async function verifyControlAsync(
  scheme: ControlScheme,
  values: ControlValues,
  received: string | undefined,
  key: string,
  options: ControlOptions & CryptoOptions = {}
): Promise<ControlVerifyResult> {
  const input = concatenation(scheme, values, key, options)
  return compareAsync(digestBytes(input, options), received)
}

/** Asynchronous {@link signControl}. */
export async function signControlAsync(operationId: OperationId, params: ControlValues, options: OperationControlOptions & CryptoOptions): Promise<string> {
  return controlDigestAsync(controlSchemeOf(operationId), params, options.key, options)
}

/** Asynchronous {@link verifyOperationControl}. */
export async function verifyOperationControlAsync(
  operationId: OperationId,
  params: ControlValues,
  options: OperationControlOptions & CryptoOptions
): Promise<ControlVerifyResult> {
  return verifyControlAsync(controlSchemeOf(operationId), params, params["control"], options.key, options)
}

/** Asynchronous {@link callbackControl}. */
export async function callbackControlAsync(values: CallbackControlValues, key: string, options: CryptoOptions = {}): Promise<string> {
  return digestHex(callbackConcatenation(values, key), options)
}

/** Asynchronous {@link verifyCallbackControl}. */
export async function verifyCallbackControlAsync(
  values: CallbackControlValues,
  received: string | undefined,
  key: string,
  options: CryptoOptions = {}
): Promise<ControlVerifyResult> {
  const input = callbackConcatenation(values, key)
  return compareAsync(digestBytes(input, options), received)
}

/** An RSA-SHA256 request for {@link signOAuthAsync}: the key from `loadPrivateKey` (Node) or `importPrivateKey` (any runtime). */
export interface RsaSha256SignRequestAsync extends Omit<HmacSha1SignRequest, "signatureMethod" | "consumerSecret"> {
  /** Selects RSA-SHA256. */
  readonly signatureMethod: "RSA-SHA256"
  /** The merchant's private key. */
  readonly privateKey: RsaPrivateKey | WebCryptoPrivateKey
}

/** A request {@link signOAuthAsync} can sign. */
export type OAuthSignRequestAsync = HmacSha1SignRequest | RsaSha256SignRequestAsync

// A node key used with the WebCrypto provider is imported once.
const webKeys = new WeakMap<RsaPrivateKey | RsaPublicKey, Promise<CryptoKey>>()

/** @internal The `CryptoKey` of a node key (imported once), for the WebCrypto provider. */
function webCryptoKeyOf(key: RsaPrivateKey | RsaPublicKey): Promise<CryptoKey> {
  let found = webKeys.get(key)
  if (found === undefined) {
    found = key instanceof RsaPrivateKey
      ? globalThis.crypto.subtle.importKey("pkcs8", key.keyObject.export({ type: "pkcs8", format: "der" }) as BufferSource, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"])
      : globalThis.crypto.subtle.importKey("spki", key.keyObject.export({ type: "spki", format: "der" }) as BufferSource, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"])
    webKeys.set(key, found)
  }
  return found
}

/**
 * Asynchronous {@link signOAuth}: the same base string, signature and header, on `node:crypto`
 * where it exists, else on WebCrypto (HMAC-SHA1 and RSA-SHA256 both). An RSA key from
 * `importPrivateKey` is always used through WebCrypto.
 *
 * @example
 * const key = await importPrivateKey(pem) // PKCS#8 or PKCS#1 PEM, any runtime
 * const { authorizationHeader } = await signOAuthAsync({ url, params, consumerKey: login, signatureMethod: "RSA-SHA256", privateKey: key })
 *
 * @throws (as a rejected Promise) the errors of `signOAuth`, and `CryptoUnavailableError` when
 *   the chosen provider is missing.
 */
export async function signOAuthAsync(request: OAuthSignRequestAsync, options: OAuthSignOptions & CryptoOptions = {}): Promise<OAuthSignature> {
  const method = request.signatureMethod
  if (method !== "HMAC-SHA1" && method !== "RSA-SHA256") throw new InvalidRequestError("signatureMethod", "invalid-value", "HMAC-SHA1 or RSA-SHA256")
  const provider = providerOf(options)
  const consumer = prepareConsumer(request.consumerKey, method, request.token)
  if (method === "HMAC-SHA1") {
    const secret = (request as HmacSha1SignRequest).consumerSecret
    if (typeof secret !== "string") throw new InvalidRequestError("consumerSecret", "missing")
    const prepared = prepareRequest(consumer, request, options)
    const keyText = hmacKey(secret, request.token?.secret ?? "")
    const base = prepared.baseString
    const signature = provider === "node" ? hmacSha1Base64(base, keyText) : await hmacSha1Base64Web(base, keyText)
    return finishSignature(consumer, prepared, signature, options.realm)
  }
  const key = (request as RsaSha256SignRequestAsync).privateKey
  if (!(key instanceof RsaPrivateKey) && !(key instanceof WebCryptoPrivateKey)) {
    throw new InvalidRequestError("privateKey", "invalid-value", "load it with loadPrivateKey or importPrivateKey")
  }
  const prepared = prepareRequest(consumer, request, options)
  const base = prepared.baseString
  let signature: string
  if (key instanceof WebCryptoPrivateKey) signature = await rsaSha256Base64Web(base, key.cryptoKey)
  else if (provider === "node") signature = rsaSha256Base64(base, key.keyObject)
  else signature = await rsaSha256Base64Web(base, await webCryptoKeyOf(key))
  return finishSignature(consumer, prepared, signature, options.realm)
}

/** @internal A WebCrypto public key for verification, from either key type. */
export async function webPublicKey(key: RsaPublicKey | WebCryptoPublicKey): Promise<CryptoKey> {
  if (key instanceof WebCryptoPublicKey) return key.cryptoKey
  requireNodeCrypto()
  return webCryptoKeyOf(key)
}
