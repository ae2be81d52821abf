import { decodeSha1Hex } from "./constant-time"
import { ControlVerificationError, InvalidRequestError, type ControlFailureReason } from "./errors"
import { sha1Hex } from "./hash"
import { toMinorUnits, type MinorUnits } from "./minor-units"

/**
 * The part of an operation's auth row that a control digest needs: the code (C1–C8) and the wire
 * names of the values in digest order. Structurally the `ControlAuth` of `@paykit/contracts`.
 */
export interface ControlScheme {
  /** The scheme's code in the operation table, e.g. `C6`. */
  readonly code: string
  /** The digest's inputs in order: wire field names (`amount` enters in minor units) and `endpointId`; the control key is appended after them. */
  readonly fields: ReadonlyArray<string>
}

/**
 * The request's form values by wire name (a superset of the digest's fields is fine). Values are
 * strings exactly as sent; an absent value is `undefined` (or missing).
 */
export type ControlValues = Readonly<Record<string, string | undefined>>

/** Inputs of a control digest other than the form values. */
export interface ControlOptions {
  /**
   * The `endpointId` path parameter (an endpoint or endpoint-group id). Needed only by codes whose
   * fields include `endpointId` (C2, C6); it is not a form field, hence given separately.
   */
  readonly endpointId?: string | number | bigint
  /**
   * How `amount` enters the digest: `"cents"` (the default, × 100 for every currency) or
   * `"iso4217"` (× 10^exponent of the request's `currency`). See {@link MinorUnits}.
   */
  readonly minorUnits?: MinorUnits
}

/** Result of a verification: `ok`, or the reason and a typed error ready to throw. */
export type VerifyResult<Reason extends string, E extends Error> =
  | {
      /** The check passed. */
      readonly ok: true
    }
  | {
      /** The check failed. */
      readonly ok: false
      /** Which check failed. */
      readonly reason: Reason
      /** A typed error for `reason`, for callers who prefer to throw. */
      readonly error: E
    }

/** Result of {@link verifyControl} and {@link verifyCallbackControl}. */
export type ControlVerifyResult = VerifyResult<ControlFailureReason, ControlVerificationError>

function endpointIdString(endpointId: ControlOptions["endpointId"]): string {
  if (typeof endpointId === "string") return endpointId
  if (typeof endpointId === "bigint") return endpointId.toString()
  if (typeof endpointId === "number" && Number.isSafeInteger(endpointId)) return String(endpointId)
  if (endpointId === undefined) throw new InvalidRequestError("endpointId", "missing")
  throw new InvalidRequestError("endpointId", "invalid-value", "not a safe integer")
}

/**
 * Concatenates the digest input. The result contains the key, so it never leaves this module.
 * Absent values enter as "" (C4's unsent amount/currency, C7's unknown orderid); `amount` enters
 * in minor units (`options.minorUnits`). A `currency` is required beside an `amount` in both modes:
 * a request with an amount and no currency is malformed even where the scale does not need it.
 *
 * @internal
 */
export function concatenation(scheme: ControlScheme, values: ControlValues, key: string, options: ControlOptions): string {
  if (typeof key !== "string" || key.length === 0) throw new InvalidRequestError("key", "missing")
  let out = ""
  for (const field of scheme.fields) {
    if (field === "endpointId") {
      out += endpointIdString(options.endpointId)
      continue
    }
    const value = values[field]
    if (value === undefined) continue
    if (typeof value !== "string") throw new InvalidRequestError(field, "not-a-string")
    if (field === "amount") {
      const currency = values["currency"]
      if (currency === undefined || currency === "") throw new InvalidRequestError("currency", "missing", "an amount needs its currency")
      out += toMinorUnits(value, currency, options)
    } else {
      out += value
    }
  }
  return out + key
}

/**
 * The `control` digest of a request: lowercase hex SHA-1 of the UTF-8 concatenation, without
 * separators, of the scheme's values in order, then the merchant control key. Values are hashed
 * exactly as given (no trimming, case folding, Unicode normalisation or URL encoding), except
 * `amount`, which enters in minor units: cents (× 100) by default, or by the currency's ISO 4217
 * exponent with `{ minorUnits: "iso4217" }`.
 *
 * @example
 * controlDigest({ code: "C6", fields: ["endpointId", "client_orderid", "amount", "email"] },
 *   { client_orderid: "902B4FF5", amount: "10.42", currency: "USD", email: "john.smith@gmail.com" },
 *   "B17F59B4-A7DC-41B4-8FF9-37D986B43D20", { endpointId: 1111 })
 * // → "c6bdd88a78834ef4b863b088827a459f039e8257"
 *
 * @throws {InvalidAmountError} for a malformed `amount` (or one finer than the mode's scale).
 * @throws {UnknownCurrencyError} in `iso4217` mode, when `amount` is present and `currency` has no
 *   ISO 4217 exponent.
 * @throws {InvalidRequestError} when `endpointId` is needed but absent, `currency` is absent beside
 *   an `amount`, a value is not a string, the key is empty, or `minorUnits` is not a mode.
 */
export function controlDigest(scheme: ControlScheme, values: ControlValues, key: string, options: ControlOptions = {}): string {
  return sha1Hex(concatenation(scheme, values, key, options))
}

/**
 * Compares a received control value (either hex letter case) with the digest of the request, in
 * constant time.
 *
 * Returns a result rather than throwing because a bad control is an expected outcome on a server;
 * `result.error` is a ready {@link ControlVerificationError} for callers who prefer to throw. It
 * still throws the typed errors of {@link controlDigest} when the request itself cannot be
 * digested (a malformed amount is a validation error, not an authentication failure).
 */
export function verifyControl(
  scheme: ControlScheme,
  values: ControlValues,
  received: string | undefined,
  key: string,
  options: ControlOptions = {}
): ControlVerifyResult {
  return compareControl(sha1Hex(concatenation(scheme, values, key, options)), received)
}

/**
 * Shared by request and callback verification: `received` against the lowercase hex digest
 * `expected`, on the hex text itself (decoding the received hex to bytes first, a regex and 20
 * parses, was a tenth of the simulator's CPU per request). Missing → `missing`; not 40 hex digits →
 * `malformed` (the received value is public, so that verdict may depend on it); else `mismatch`
 * unless equal in either letter case, in time independent of where they differ. A letter of
 * `expected` (a–f, bit 0x40 set) also accepts its capital, so only there is the received
 * character's case bit folded; a digit must match exactly.
 */
export function compareControl(expected: string, received: string | undefined): ControlVerifyResult {
  if (received === undefined || received === "") return controlFailure("missing")
  if (typeof received !== "string" || received.length !== 40 || expected.length !== 40) return controlFailure("malformed")
  let diff = 0
  let notHex = 0
  for (let i = 0; i < 40; i++) {
    const c = received.charCodeAt(i)
    const folded = c | 0x20
    notHex |= (c >= 48 && c <= 57) || (folded >= 97 && folded <= 102) ? 0 : 1
    const e = expected.charCodeAt(i)
    diff |= (c | ((e & 0x40) >> 1)) ^ e
  }
  if (notHex !== 0) return controlFailure("malformed")
  return diff === 0 ? OK : controlFailure("mismatch")
}

/** The received control's 20 bytes, or the failed result for a missing or malformed one. */
export function receivedControl(received: string | undefined): Uint8Array | ControlVerifyResult {
  if (received === undefined || received === "") return controlFailure("missing")
  if (typeof received !== "string") return controlFailure("malformed")
  const bytes = decodeSha1Hex(received)
  return bytes === undefined ? controlFailure("malformed") : bytes
}

const OK = { ok: true } as const

/** @internal */
export function controlFailure(reason: ControlFailureReason): ControlVerifyResult {
  return { ok: false, reason, error: new ControlVerificationError(reason) }
}
