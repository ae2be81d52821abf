import { OAuthVerificationError, type OAuthFailureReason } from "../errors"
import { percentDecode, percentEncode } from "./percent"

/** The `oauth_*` protocol parameters of a signed request, `oauth_signature` included. */
export interface OAuthProtocolParams {
  /** The consumer key (the merchant login). */
  readonly oauth_consumer_key: string
  /** The request's unique nonce. */
  readonly oauth_nonce: string
  /** The Base64 signature. */
  readonly oauth_signature: string
  /** `HMAC-SHA1` or `RSA-SHA256`. */
  readonly oauth_signature_method: string
  /** Seconds since the Unix epoch, as a decimal string. */
  readonly oauth_timestamp: string
  /** The token key, when a token is used. */
  readonly oauth_token?: string
  /** `1.0` when sent. */
  readonly oauth_version?: string
}

/**
 * Formats an `Authorization` header (RFC 5849 §3.5.1): `OAuth `, then `realm` first when given,
 * then every protocol parameter sorted by name, each `name="enc(value)"`, joined by `, `.
 *
 * @example
 * authorizationHeader({ oauth_consumer_key: "m", oauth_nonce: "n", oauth_signature: "a+b=",
 *   oauth_signature_method: "HMAC-SHA1", oauth_timestamp: "1", oauth_version: "1.0" })
 * // → 'OAuth oauth_consumer_key="m", oauth_nonce="n", oauth_signature="a%2Bb%3D", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1", oauth_version="1.0"'
 */
export function authorizationHeader(params: OAuthProtocolParams, realm?: string): string {
  // The names are fixed, so their sorted order is written out instead of sorted per call.
  let out = realm === undefined ? "OAuth " : `OAuth realm="${percentEncode(realm)}", `
  out += `oauth_consumer_key="${percentEncode(params.oauth_consumer_key)}"`
  out += `, oauth_nonce="${percentEncode(params.oauth_nonce)}"`
  out += `, oauth_signature="${percentEncode(params.oauth_signature)}"`
  out += `, oauth_signature_method="${percentEncode(params.oauth_signature_method)}"`
  out += `, oauth_timestamp="${percentEncode(params.oauth_timestamp)}"`
  if (params.oauth_token !== undefined) out += `, oauth_token="${percentEncode(params.oauth_token)}"`
  if (params.oauth_version !== undefined) out += `, oauth_version="${percentEncode(params.oauth_version)}"`
  return out
}

/** A parsed `Authorization: OAuth ...` header. */
export interface ParsedOAuthHeader {
  /** The decoded `realm`, when present (informational; never signed). */
  readonly realm: string | undefined
  /** The decoded `oauth_consumer_key`. */
  readonly consumerKey: string
  /** The decoded `oauth_nonce`. */
  readonly nonce: string
  /** The Base64 signature, percent-decoded. */
  readonly signature: string
  /** The decoded `oauth_signature_method`, not yet checked. */
  readonly signatureMethod: string
  /** The timestamp exactly as sent (validated later). */
  readonly timestamp: string
  /** The decoded `oauth_version`, when present. */
  readonly version: string | undefined
}

/** Result of {@link parseOAuthHeader}. */
export type ParseOAuthHeaderResult =
  | {
      /** The header parsed. */
      readonly ok: true
      /** The decoded parameters. */
      readonly header: ParsedOAuthHeader
    }
  | {
      /** The header is malformed. */
      readonly ok: false
      /** Which rule it broke. */
      readonly reason: OAuthFailureReason
      /** A typed error for `reason`. */
      readonly error: OAuthVerificationError
    }

const SCHEME = /^OAuth[ \t]+/i
const PARAM = /([A-Za-z0-9_]+)="([^"\\]*)"/y
const SEPARATOR = /[ \t]*,[ \t]*/y
const TRAILING_SPACE = /[ \t]*$/y

const REQUIRED = ["oauth_consumer_key", "oauth_nonce", "oauth_signature", "oauth_signature_method", "oauth_timestamp"] as const
const ALLOWED: ReadonlySet<string> = new Set<string>([...REQUIRED, "oauth_version", "realm"])

function fail(reason: OAuthFailureReason, detail?: string): ParseOAuthHeaderResult {
  return { ok: false, reason, error: new OAuthVerificationError(reason, detail) }
}

/**
 * Parses an `Authorization` header strictly: scheme `OAuth` (any case), then `name="value"` pairs
 * separated by commas with optional spaces; values must be percent-encoded (unreserved characters
 * and `%XX` only, valid UTF-8), except `realm`, which is decoded when it can be. Only `realm`,
 * `oauth_consumer_key`, `oauth_nonce`, `oauth_signature`, `oauth_signature_method`,
 * `oauth_timestamp` and `oauth_version` are allowed (the payment API never uses `oauth_token`).
 *
 * Each failure has its own reason: `malformed-header`, `duplicate-parameter`,
 * `unexpected-parameter`, `missing-parameter` (absent or empty), `unsupported-version` (not `1.0`).
 */
export function parseOAuthHeader(header: string | null | undefined): ParseOAuthHeaderResult {
  if (typeof header !== "string") return fail("malformed-header", "no Authorization header")
  const scheme = SCHEME.exec(header)
  if (scheme === null) return fail("malformed-header", "not the OAuth scheme")
  const values = new Map<string, string>()
  let pos = scheme[0].length
  for (;;) {
    PARAM.lastIndex = pos
    const param = PARAM.exec(header)
    if (param === null) return fail("malformed-header", "expected name=\"value\"")
    const name = param[1] as string
    if (values.has(name)) return fail("duplicate-parameter", name)
    if (!ALLOWED.has(name)) return fail("unexpected-parameter", name.slice(0, 40))
    const raw = param[2] as string
    const decoded = percentDecode(raw)
    if (decoded === undefined && name !== "realm") return fail("malformed-header", `${name} is not percent-encoded`)
    values.set(name, decoded ?? raw)
    pos = PARAM.lastIndex
    TRAILING_SPACE.lastIndex = pos
    if (TRAILING_SPACE.test(header)) break
    SEPARATOR.lastIndex = pos
    if (SEPARATOR.exec(header) === null) return fail("malformed-header", "expected a comma")
    pos = SEPARATOR.lastIndex
  }
  for (const name of REQUIRED) {
    if (!values.get(name)) return fail("missing-parameter", name)
  }
  const version = values.get("oauth_version")
  if (version !== undefined && version !== "1.0") return fail("unsupported-version")
  return {
    ok: true,
    header: {
      realm: values.get("realm"),
      consumerKey: values.get("oauth_consumer_key") as string,
      nonce: values.get("oauth_nonce") as string,
      signature: values.get("oauth_signature") as string,
      signatureMethod: values.get("oauth_signature_method") as string,
      timestamp: values.get("oauth_timestamp") as string,
      version
    }
  }
}
