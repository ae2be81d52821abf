import { decodeBase64 } from "../crypto/bytes"
import { OAuthVerificationError, SigningError, type OAuthFailureReason } from "../errors"
import { webPublicKey } from "../async"
import { utf8 } from "../crypto/bytes"
import { providerOf, type CryptoProvider } from "../crypto/runtime"
import { verifyHmacSha1Web, verifyRsaSha256Web, type WebCryptoPublicKey } from "../crypto/webcrypto"
import { RsaPublicKey } from "../keys"
import { baseStringOf } from "./base-string"
import { parseOAuthHeader, type ParsedOAuthHeader } from "./header"
import { InMemoryNonceStore, type NonceStore } from "./nonce-store"
import { parseQuery, splitUrl, toPairs, type ParamPair, type ParamsInput } from "./params"
import { hmacKey, verifyHmacSha1, verifyRsaSha256, type SignatureMethod } from "./sign"

/** Credentials of one consumer (merchant), as the server knows them. */
export interface OAuthConsumer {
  /** The merchant control key, for HMAC-SHA1. */
  readonly consumerSecret?: string
  /**
   * The merchant's public key, for RSA-SHA256: from `loadPublicKey` (Node) or `importPublicKey`
   * (WebCrypto, any runtime). Load it once.
   */
  readonly publicKey?: RsaPublicKey | WebCryptoPublicKey
}

/** A received request, as the server decoded it. */
export interface OAuthVerifyRequest {
  /** HTTP method; defaults to POST. */
  readonly method?: string
  /** The full request URL as received (scheme and host as the client addressed them). */
  readonly url: string
  /** The decoded form body. */
  readonly params?: ParamsInput
  /** The `Authorization` header value. */
  readonly authorizationHeader: string | null | undefined
}

/** Per-request expectations, typically from the operation table and the endpoint's owner. */
export interface OAuthVerifyExpectations {
  /** Methods this operation accepts (e.g. only RSA-SHA256 for v4). Default: both. */
  readonly signatureMethods?: ReadonlyArray<SignatureMethod>
  /** The consumer key the request must carry (e.g. the login owning the endpoint). */
  readonly expectedConsumerKey?: string
}

/** Options of {@link createOAuthVerifier}. */
export interface OAuthVerifierOptions {
  /** Finds a consumer's credentials; `undefined` for an unknown key. */
  readonly lookupConsumer: (consumerKey: string) => OAuthConsumer | undefined | Promise<OAuthConsumer | undefined>
  /** Clock in epoch milliseconds; default `Date.now`. Inject one to test the window. */
  readonly now?: () => number
  /** Accepted distance between `oauth_timestamp` and the clock, each way. Default 300 s. */
  readonly windowSeconds?: number
  /** Default: a new {@link InMemoryNonceStore} owned by the verifier. */
  readonly nonceStore?: NonceStore
  /**
   * Where signatures are checked: `"node"` (`node:crypto`) or `"webcrypto"`. Default `"node"`
   * where `node:crypto` exists, else `"webcrypto"`; a key from `importPublicKey` always verifies
   * on WebCrypto. `verify` is asynchronous either way.
   */
  readonly crypto?: CryptoProvider
}

/** Outcome of a verification: who signed, or which check failed plus a typed error. */
export type OAuthVerifyResult =
  | {
    /** Every check passed. */
    readonly ok: true
    /** The authenticated consumer key (merchant login). */
    readonly consumerKey: string
    /** The signature method the request used. */
    readonly signatureMethod: SignatureMethod
    /** The request's `oauth_timestamp`, in seconds. */
    readonly timestamp: number
    /** The request's nonce (now recorded). */
    readonly nonce: string
  }
  | {
    /** A check failed. */
    readonly ok: false
    /** Which check failed. */
    readonly reason: OAuthFailureReason
    /** A typed error for `reason`. */
    readonly error: OAuthVerificationError
  }

/** A server-side verifier holding its clock, window and nonce store. */
export interface OAuthVerifier {
  /**
   * Checks, in order: header syntax, signature method, expected consumer, timestamp format and
   * window, consumer lookup, parameters, signature, then nonce replay (the nonce is recorded only
   * once the signature verified). Never throws for a bad request; rejects only if
   * `lookupConsumer` or the nonce store does.
   *
   * `oauth_*` parameters may also travel in the form body or the query, as the gateway's
   * documentation asks (docs/decisions.md#7-failed-authentication): each is accepted when it equals the header's value
   * (and is then signed once, from the header), and refused with `parameter-mismatch` when it
   * differs or the header lacks it; one sent twice outside the header is `duplicate-parameter`.
   */
  verify(request: OAuthVerifyRequest, expectations?: OAuthVerifyExpectations): Promise<OAuthVerifyResult>
}

const METHODS: ReadonlyArray<SignatureMethod> = ["HMAC-SHA1", "RSA-SHA256"]
const TIMESTAMP = /^[0-9]{1,15}$/

function fail(reason: OAuthFailureReason, detail?: string): OAuthVerifyResult {
  return { ok: false, reason, error: new OAuthVerificationError(reason, detail) }
}


/**
 * Creates a verifier for OAuth 1.0a requests signed with HMAC-SHA1 or RSA-SHA256.
 *
 * @example
 * const verifier = createOAuthVerifier({ lookupConsumer: (login) => merchants.get(login) })
 * const result = await verifier.verify({ url, params: new URLSearchParams(body), authorizationHeader })
 * if (!result.ok) return badRequest(result.reason)
 */
export function createOAuthVerifier(options: OAuthVerifierOptions): OAuthVerifier {
  const now = options.now ?? Date.now
  const windowSeconds = options.windowSeconds ?? 300
  if (!(windowSeconds >= 0)) throw new RangeError("windowSeconds must be a non-negative number")
  const nonceStore = options.nonceStore ?? new InMemoryNonceStore()
  const provider = providerOf(options)
  return {
    verify: (request, expectations = {}) => verifyWith(request, expectations, options.lookupConsumer, now, windowSeconds, nonceStore, provider)
  }
}

/**
 * One-shot form of {@link OAuthVerifier.verify}. `nonceStore` is required here: a store created
 * per call would remember nothing and let every replay through.
 */
export function verifyOAuth(
  request: OAuthVerifyRequest,
  options: OAuthVerifierOptions & OAuthVerifyExpectations & { readonly nonceStore: NonceStore }
): Promise<OAuthVerifyResult> {
  return createOAuthVerifier(options).verify(request, options)
}

async function verifyWith(
  request: OAuthVerifyRequest,
  expectations: OAuthVerifyExpectations,
  lookupConsumer: OAuthVerifierOptions["lookupConsumer"],
  now: () => number,
  windowSeconds: number,
  nonceStore: NonceStore,
  provider: CryptoProvider
): Promise<OAuthVerifyResult> {
  const parsed = parseOAuthHeader(request.authorizationHeader)
  if (!parsed.ok) return parsed
  const header = parsed.header

  const allowed = expectations.signatureMethods ?? METHODS
  const method = METHODS.find((m) => m === header.signatureMethod)
  if (method === undefined || !allowed.includes(method)) return fail("unsupported-method", header.signatureMethod.slice(0, 20))
  if (expectations.expectedConsumerKey !== undefined && header.consumerKey !== expectations.expectedConsumerKey) {
    return fail("consumer-mismatch")
  }

  if (!TIMESTAMP.test(header.timestamp)) return fail("invalid-timestamp")
  const timestamp = Number(header.timestamp)
  const nowSeconds = Math.floor(now() / 1000)
  if (Math.abs(nowSeconds - timestamp) > windowSeconds) return fail("stale-timestamp")

  const consumer = await lookupConsumer(header.consumerKey)
  if (consumer === undefined) return fail("unknown-consumer")
  if (method === "HMAC-SHA1" ? consumer.consumerSecret === undefined : consumer.publicKey === undefined) {
    return fail("unsupported-method", "no credential for this method")
  }

  let baseString: string
  try {
    const { baseUri, query } = splitUrl(request.url)
    const params: Array<ParamPair> = []
    const copies = protocolCopies(header, parseQuery(query), toPairs(request.params), params)
    if (copies !== undefined) return copies
    params.push(
      ["oauth_consumer_key", header.consumerKey],
      ["oauth_nonce", header.nonce],
      ["oauth_signature_method", header.signatureMethod],
      ["oauth_timestamp", header.timestamp]
    )
    if (header.version !== undefined) params.push(["oauth_version", header.version])
    baseString = baseStringOf(request.method ?? "POST", baseUri, params)
  } catch (error) {
    if (error instanceof SigningError) return fail("malformed-request", error.message)
    throw error
  }

  const signature = decodeBase64(header.signature)
  const valid = signature !== undefined && await checkSignature(method, baseString, consumer, signature, provider)
  if (!valid) return fail("bad-signature")

  const fresh = await nonceStore.remember(header.consumerKey, header.nonce, timestamp + windowSeconds, nowSeconds)
  if (!fresh) return fail("replayed-nonce")
  return { ok: true, consumerKey: header.consumerKey, signatureMethod: method, timestamp, nonce: header.nonce }
}

/** The header's value of each protocol parameter a body or query may repeat. */
function headerValue(header: ParsedOAuthHeader, name: string): string | undefined {
  switch (name) {
    case "oauth_consumer_key": return header.consumerKey
    case "oauth_nonce": return header.nonce
    case "oauth_signature": return header.signature
    case "oauth_signature_method": return header.signatureMethod
    case "oauth_timestamp": return header.timestamp
    case "oauth_version": return header.version
    default: return undefined
  }
}

/**
 * Copies the non-protocol pairs of the query and body into `out`, and vets the `oauth_*` copies
 * the gateway's documentation puts in the body: equal to the header's and sent once, they are
 * dropped (the header's value is signed once); otherwise the request fails here.
 */
function protocolCopies(
  header: ParsedOAuthHeader,
  query: ReadonlyArray<ParamPair>,
  body: ReadonlyArray<ParamPair>,
  out: Array<ParamPair>
): OAuthVerifyResult | undefined {
  let seen: Set<string> | undefined
  for (const pairs of [query, body]) {
    for (const pair of pairs) {
      const name = pair[0]
      if (!name.startsWith("oauth_")) {
        out.push(pair)
        continue
      }
      seen ??= new Set()
      if (seen.has(name)) return fail("duplicate-parameter", `${name.slice(0, 40)} sent twice outside the header`)
      seen.add(name)
      const expected = headerValue(header, name)
      // Compared as decoded text, like the header's values; neither side is secret.
      if (expected === undefined || pair[1] !== expected) return fail("parameter-mismatch", name.slice(0, 40))
    }
  }
  return undefined
}

async function checkSignature(
  method: SignatureMethod,
  baseString: string,
  consumer: OAuthConsumer,
  signature: Uint8Array,
  provider: CryptoProvider
): Promise<boolean> {
  if (method === "HMAC-SHA1") {
    const key = hmacKey(consumer.consumerSecret as string)
    return provider === "node" ? verifyHmacSha1(baseString, key, signature) : verifyHmacSha1Web(baseString, key, signature)
  }
  const publicKey = consumer.publicKey as RsaPublicKey | WebCryptoPublicKey
  if (provider === "node" && publicKey instanceof RsaPublicKey) return verifyRsaSha256(baseString, publicKey.keyObject, signature)
  return verifyRsaSha256Web(utf8(baseString), await webPublicKey(publicKey), signature)
}
