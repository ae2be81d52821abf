/**
 * The merchants a simulator serves: as configured (`MerchantConfig`, public) and as the simulator
 * keeps them, with their public key parsed once (`Merchant`).
 *
 * @packageDocumentation
 */
import { loadPublicKey, type MinorUnits, type RsaPublicKey } from "@paykit/signing"

/** A merchant the simulator knows: credentials, endpoints and (for v4 operations) its RSA public key. */
export interface MerchantConfig {
  /** Login; also the OAuth consumer key. */
  login: string
  /** The merchant control key (control digests, OAuth HMAC key, callback control). */
  controlKey: string
  /**
   * The key this merchant's callbacks and final redirects are signed with, when it is not
   * `controlKey`: set it to the previous key to test a key rotation (requests are still verified
   * with `controlKey` only, as the gateway does while its callbacks lag behind). Default: `controlKey`.
   */
  callbackControlKey?: string
  /**
   * Endpoint ids that belong to this merchant. int64: past 2^53 give them as digit strings (or
   * bigint); a number that is no longer exact is refused.
   */
  endpointIds: ReadonlyArray<number | string | bigint>
  /** Endpoint group ids that belong to this merchant (usable wherever an endpoint id is); as {@link MerchantConfig.endpointIds}. */
  endpointGroupIds?: ReadonlyArray<number | string | bigint>
  /** SPKI or PKCS#1 PEM of the public key that verifies OAuth RSA-SHA256 requests. */
  rsaPublicKeyPem?: string
  /**
   * How this merchant's control digests write amounts (docs/decisions.md#2-amounts-in-cents): `"cents"` (the
   * default: × 100 for every currency, as the gateway's libraries do) or `"iso4217"` (the
   * currency's exponent: JPY 0, USD 2, KWD 3).
   */
  minorUnits?: "cents" | "iso4217"
}

/** A merchant with its public key parsed once (never per request). */
export interface Merchant {
  readonly login: string
  readonly controlKey: string
  /** The key callbacks and final redirects are signed with (`controlKey` unless configured: a key rotation). */
  readonly callbackControlKey: string
  /** Endpoint and group ids as decimal digit strings (int64). */
  readonly endpoints: ReadonlySet<string>
  readonly publicKey: RsaPublicKey | undefined
  /** How this merchant's digests write amounts (decision 2): cents by default, or the ISO exponent. */
  readonly minorUnits: MinorUnits
  /** Test mode: a refused signature says how the simulator computed its own (`explainControl` of auth.ts). */
  readonly explainSignatures?: boolean
}

/** Parses a merchant's RSA public key once, at configuration time. */
export function parsePublicKey(pem: string | undefined): RsaPublicKey | undefined {
  return pem === undefined ? undefined : loadPublicKey(pem)
}
