/**
 * Authentication, verified with `@paykit/signing` only: control digests C1–C8 per the operation
 * table, OAuth 1.0a HMAC-SHA1 / RSA-SHA256 against the SIMULATOR clock (±300 s) with nonce replay
 * detection, callback control, and minor units. Each failure maps to its own spec error-code.
 *
 * @packageDocumentation
 */
import {
  callbackControl,
  createOAuthVerifier,
  currencyExponent,
  InvalidAmountError,
  toMinorUnits,
  verifyOperationControl,
  type MinorUnits,
  type OAuthFailureReason,
  type NonceStore,
  type OAuthVerifier
} from "@paykit/signing"
import type { ErrorCode, OperationId } from "@paykit/contracts"
import { SimError } from "../http/replies"
import { explainControl, explainOAuth } from "./explain"
import type { Merchant } from "./merchant"
import type { Fields } from "../http/validation"

/** The OAuth timestamp window, seconds each way (docs/decisions.md#6-oauth-10a-exactly-as-rfc-5849). */
const OAUTH_WINDOW_SECONDS = 300

/** Verifies `control` of a control-signed operation; mismatch → control-mismatch. */
export function checkControl(operationId: OperationId, fields: Fields, endpointId: string, merchant: Merchant): void {
  let ok: boolean
  try {
    ok = verifyOperationControl(operationId, fields, { key: merchant.controlKey, endpointId, minorUnits: merchant.minorUnits }).ok
  } catch (error) {
    // An amount the merchant's minor-units mode cannot write (a non-zero third fraction digit in
    // cents) is named as such; any other body that cannot be digested is a mismatch.
    if (error instanceof InvalidAmountError) {
      throw new SimError("invalid-amount", `${error.field}: ${error.message}`, fields["client_orderid"] ?? fields["client-order-id"])
    }
    ok = false
  }
  if (!ok) {
    const why = merchant.explainSignatures === true ? explainControl(operationId, fields, endpointId, merchant.minorUnits) : ""
    throw new SimError("control-mismatch", `control: does not match the digest of this request.${why}`, fields["client_orderid"] ?? fields["client-order-id"])
  }
}

/** Which error-code each OAuth failure gets (docs/decisions.md#7-failed-authentication). */
const OAUTH_CODES: Record<OAuthFailureReason, ErrorCode> = {
  "malformed-header": "oauth-malformed",
  "duplicate-parameter": "oauth-malformed",
  "missing-parameter": "oauth-malformed",
  "unexpected-parameter": "oauth-malformed",
  "unsupported-version": "oauth-malformed",
  "invalid-timestamp": "oauth-malformed",
  "malformed-request": "oauth-malformed",
  "unsupported-method": "oauth-unsupported-method",
  "unknown-consumer": "unknown-merchant",
  "consumer-mismatch": "unknown-merchant",
  "stale-timestamp": "oauth-stale-timestamp",
  "bad-signature": "oauth-bad-signature",
  "replayed-nonce": "oauth-replayed-nonce",
  "parameter-mismatch": "oauth-parameter-mismatch"
}

/** An OAuth verifier on the given clock with the given nonce store (a new one after reset). */
export function oauthVerifier(now: () => number, merchantByLogin: (login: string) => Merchant | undefined, nonceStore: NonceStore): OAuthVerifier {
  const verifier = createOAuthVerifier({
    now,
    windowSeconds: OAUTH_WINDOW_SECONDS,
    nonceStore,
    lookupConsumer: (login) => {
      const merchant = merchantByLogin(login)
      if (merchant === undefined) return undefined
      return merchant.publicKey === undefined
        ? { consumerSecret: merchant.controlKey }
        : { consumerSecret: merchant.controlKey, publicKey: merchant.publicKey }
    }
  })
  merchantsOf.set(verifier, merchantByLogin)
  return verifier
}

/** Each verifier's merchant lookup: a refused signature is explained only for a test-mode merchant. */
const merchantsOf = new WeakMap<OAuthVerifier, (login: string) => Merchant | undefined>()

/** Verifies an OAuth-signed request and returns the consumer key (the merchant login). */
export async function checkOAuth(
  verifier: OAuthVerifier,
  input: {
    readonly method: "HMAC-SHA1" | "RSA-SHA256"
    readonly header: string | null
    readonly url: string
    readonly pairs: ReadonlyArray<readonly [string, string]>
    readonly clientOrderId: string | undefined
  }
): Promise<string> {
  if (input.header === null || input.header.trim() === "") {
    throw new SimError("oauth-missing", "Authorization: an OAuth header is required", input.clientOrderId)
  }
  const result = await verifier.verify(
    { method: "POST", url: input.url, params: input.pairs, authorizationHeader: input.header },
    { signatureMethods: [input.method] }
  )
  if (!result.ok) {
    let why = ""
    if (result.reason === "bad-signature") {
      const consumer = /oauth_consumer_key\s*=\s*"([^"]*)"/.exec(input.header)?.[1]
      let login: string | undefined
      try {
        login = consumer === undefined ? undefined : decodeURIComponent(consumer)
      } catch {
        login = undefined
      }
      const merchant = login === undefined ? undefined : merchantsOf.get(verifier)?.(login)
      if (merchant?.explainSignatures === true) why = explainOAuth(input.method, input.url, input.pairs, input.header, input.pairs.find(([name]) => name === "amount")?.[1])
    }
    throw new SimError(OAUTH_CODES[result.reason] ?? "oauth-malformed", `Authorization: ${result.error.message}${why}`, input.clientOrderId)
  }
  return result.consumerKey
}

/** The callback / final-redirect control: SHA-1(status + orderid + client_orderid + key). */
export function signCallback(fields: { status: string; orderid: string; client_orderid: string }, controlKey: string): string {
  return callbackControl(fields, controlKey)
}

const exponents = new Map<string, number>()

/** The ISO 4217 exponent of a currency; unknown (or without a minor unit) → unknown-currency (docs/decisions.md#d2c-unknown-currency). */
export function exponentOf(currency: string): number {
  let exponent = exponents.get(currency)
  if (exponent === undefined) {
    try {
      exponent = currencyExponent(currency)
    } catch {
      throw new SimError("unknown-currency", `currency: ${currency.slice(0, 8)} is not an ISO 4217 code with a minor unit`)
    }
    exponents.set(currency, exponent)
  }
  return exponent
}

/**
 * An amount in the currency's ISO 4217 minor units as bigint, the unit the ledger keeps money in
 * (whatever mode the merchant's digests use); a malformed or over-precise amount → invalid-amount.
 */
export function minorUnits(amount: string, currency: string, field = "amount"): bigint {
  exponentOf(currency)
  // A known currency is three letters, so currency + amount names one conversion.
  const key = currency + amount
  const known = converted.get(key)
  if (known !== undefined) return known
  let minor: bigint
  try {
    minor = BigInt(toMinorUnits(amount, currency, { minorUnits: "iso4217" }))
  } catch {
    throw new SimError("invalid-amount", `${field}: more fraction digits than ${currency} allows, or not a decimal amount`)
  }
  if (converted.size >= CONVERTED_MAX) converted.clear()
  converted.set(key, minor)
  return minor
}

/**
 * Amounts converted before: a request's amount is converted by the router's check and again by its
 * operation, and a sandbox sends the same few amounts over and over. Bounded (cleared when full),
 * like the string caches of ../state/compact.ts; only valid conversions are kept.
 */
const converted = new Map<string, bigint>()
const CONVERTED_MAX = 4096
