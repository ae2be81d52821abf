/**
 * Every error this package throws or returns. Each class has a readonly `_tag` string literal so
 * callers can switch on it without `instanceof` (which breaks across duplicated package copies).
 *
 * No message or field ever carries a secret: no control key, private key, passphrase, PAN or CVV,
 * and no request value other than currency codes and key sizes.
 *
 * @packageDocumentation
 */

/** Base class of every error of `@paykit/signing`. */
export abstract class SigningError extends Error {
  /** Discriminant naming the concrete error class. */
  abstract readonly _tag: string
}

/** Which rule a malformed amount broke. */
export type InvalidAmountRule =
  /** The value is not a string (a number would invite float rounding). */
  | "not-a-string"
  /** The whole string does not match `^(0|[1-9][0-9]*)(\.[0-9]+)?$` (ASCII digits only). */
  | "pattern"
  /** A non-zero digit lies beyond the scale: the second fraction digit (`cents`) or the ISO 4217 exponent (`iso4217`). */
  | "precision"

/**
 * An amount cannot be written in minor units. The message names the rule and the currency but
 * never echoes the value: a caller who mixed up fields could otherwise leak a card number into logs.
 */
export class InvalidAmountError extends SigningError {
  readonly _tag = "InvalidAmountError" as const
  /** The form field that held the amount. */
  readonly field: string
  /** The rule the amount broke. */
  readonly rule: InvalidAmountRule
  /** The request's currency, when known (truncated to 16 characters). */
  readonly currency: string | undefined
  /** The minor-units mode the amount was converted in (`"cents"` or `"iso4217"`). */
  readonly minorUnits: "cents" | "iso4217"

  constructor(rule: InvalidAmountRule, currency: string | undefined, field = "amount", minorUnits: "cents" | "iso4217" = "cents") {
    const shown = typeof currency === "string" ? currency.slice(0, 16) : undefined
    super(
      rule === "not-a-string"
        ? `${field} must be a decimal string`
        : rule === "pattern"
          ? `${field} must match ^(0|[1-9][0-9]*)(\\.[0-9]+)?$`
          : minorUnits === "cents"
            ? `${field} has non-zero digits beyond the second fraction digit (minor units "cents")`
            : `${field} has non-zero digits beyond the minor-unit exponent of ${shown ?? "its currency"} (minor units "iso4217")`
    )
    this.name = "InvalidAmountError"
    this.field = field
    this.rule = rule
    this.currency = shown
    this.minorUnits = minorUnits
  }
}

/** Why a currency code has no usable exponent. */
export type UnknownCurrencyReason =
  /** Not an uppercase three-letter code listed in ISO 4217. */
  | "not-iso-4217"
  /** Listed, but ISO 4217 gives it no minor unit ("N.A.": precious metals, XDR, XXX, XTS...). */
  | "no-minor-unit"

/** The currency has no ISO 4217 minor-unit exponent, so an amount in it cannot be scaled. */
export class UnknownCurrencyError extends SigningError {
  readonly _tag = "UnknownCurrencyError" as const
  /** The code as given (truncated to 16 characters). */
  readonly currency: string
  /** Why the code was refused. */
  readonly reason: UnknownCurrencyReason

  constructor(currency: string, reason: UnknownCurrencyReason) {
    const shown = JSON.stringify(currency.slice(0, 16))
    super(
      reason === "not-iso-4217"
        ? `currency ${shown} is not an ISO 4217 alphabetic code`
        : `currency ${shown} has no ISO 4217 minor unit`
    )
    this.name = "UnknownCurrencyError"
    this.currency = currency.slice(0, 16)
    this.reason = reason
  }
}

/** Which rule a request input broke (a caller error, not an authentication failure). */
export type InvalidRequestRule =
  /** A value the scheme needs is absent (e.g. `endpointId`, or `currency` beside an `amount`). */
  | "missing"
  /** A value that must be a string is not. */
  | "not-a-string"
  /** A string holds a lone UTF-16 surrogate, which has no UTF-8 encoding. */
  | "lone-surrogate"
  /** A form parameter uses a name OAuth reserves (`oauth_*`, `realm`). */
  | "reserved-name"
  /** The URL cannot be used as an OAuth base string URI. */
  | "invalid-url"
  /** A value is outside its allowed form (e.g. a timestamp that is not a decimal integer). */
  | "invalid-value"

/** A request cannot be signed or digested as given. */
export class InvalidRequestError extends SigningError {
  readonly _tag = "InvalidRequestError" as const
  /** The field, parameter or option at fault. */
  readonly field: string
  /** The rule the field broke. */
  readonly rule: InvalidRequestRule

  constructor(field: string, rule: InvalidRequestRule, detail?: string) {
    super(`${field}: ${rule}${detail === undefined ? "" : ` (${detail})`}`)
    this.name = "InvalidRequestError"
    this.field = field
    this.rule = rule
  }
}

/** An RSA key is shorter than the interface's minimum (2048 bits). */
export class WeakKeyError extends SigningError {
  readonly _tag = "WeakKeyError" as const
  /** The key's modulus length. */
  readonly bits: number
  /** The smallest accepted modulus length. */
  readonly minimumBits: number

  constructor(bits: number, minimumBits: number) {
    super(`RSA key has ${bits} bits; at least ${minimumBits} are required`)
    this.name = "WeakKeyError"
    this.bits = bits
    this.minimumBits = minimumBits
  }
}

/** Why key material could not be loaded. */
export type KeyFormatReason =
  /** Not a PEM/PKCS#12 structure this package reads. */
  | "unsupported-format"
  /** The key is encrypted and no passphrase was given. */
  | "passphrase-required"
  /** The passphrase does not decrypt the key (or the PKCS#12 MAC does not verify). */
  | "bad-passphrase"
  /** The key is not an RSA key usable with PKCS#1 v1.5. */
  | "not-rsa"
  /** A public key was given where a private key is needed, or the reverse. */
  | "wrong-key-type"
  /** A PKCS#12 file holds no private key, or more than one. */
  | "key-count"

/** Key material cannot be loaded. The message never includes the key or passphrase. */
export class KeyFormatError extends SigningError {
  readonly _tag = "KeyFormatError" as const
  /** Why the key could not be loaded. */
  readonly reason: KeyFormatReason

  constructor(reason: KeyFormatReason, detail?: string) {
    super(`cannot load key: ${reason}${detail === undefined ? "" : ` (${detail})`}`)
    this.name = "KeyFormatError"
    this.reason = reason
  }
}

/** Why a `control` value was rejected. */
export type ControlFailureReason =
  /** No control value was sent. */
  | "missing"
  /** The value is not 40 hexadecimal digits. */
  | "malformed"
  /** Well-formed, but not the digest of the request. */
  | "mismatch"

/** A `control` digest does not authenticate the request or callback. */
export class ControlVerificationError extends SigningError {
  readonly _tag = "ControlVerificationError" as const
  /** Why the `control` was refused. */
  readonly reason: ControlFailureReason

  constructor(reason: ControlFailureReason) {
    super(`control rejected: ${reason}`)
    this.name = "ControlVerificationError"
    this.reason = reason
  }
}

/** Why an OAuth-signed request was rejected, one value per check. */
export type OAuthFailureReason =
  /** No `Authorization` header, not the `OAuth` scheme, or not `name="value"` pairs. */
  | "malformed-header"
  /** An `oauth_*` parameter appears twice in the header, or twice in the body and query. */
  | "duplicate-parameter"
  /**
   * An `oauth_*` parameter also sent in the body or query (as the gateway's documentation asks)
   * differs from the header's value, or the header does not carry it.
   */
  | "parameter-mismatch"
  /** A required `oauth_*` parameter is absent. */
  | "missing-parameter"
  /** The header carries a parameter other than `realm` and the six protocol parameters. */
  | "unexpected-parameter"
  /** `oauth_version` is present and is not `1.0`. */
  | "unsupported-version"
  /** `oauth_signature_method` is not accepted, or the consumer has no key for it. */
  | "unsupported-method"
  /** No consumer is registered under `oauth_consumer_key`. */
  | "unknown-consumer"
  /** `oauth_consumer_key` is not the consumer the caller expected (e.g. the request's login). */
  | "consumer-mismatch"
  /** `oauth_timestamp` is not a decimal integer. */
  | "invalid-timestamp"
  /** `oauth_timestamp` is outside the accepted window around the verifier's clock. */
  | "stale-timestamp"
  /** The URL or the parameters cannot be normalised (bad URL, bad percent-encoding). */
  | "malformed-request"
  /** The signature is not valid Base64 or does not verify. */
  | "bad-signature"
  /** The signature verifies but the nonce was already used within the window. */
  | "replayed-nonce"

/** An OAuth 1.0a signature check failed; `reason` says which check. */
export class OAuthVerificationError extends SigningError {
  readonly _tag = "OAuthVerificationError" as const
  /** Which OAuth check failed. */
  readonly reason: OAuthFailureReason

  constructor(reason: OAuthFailureReason, detail?: string) {
    super(`OAuth rejected: ${reason}${detail === undefined ? "" : ` (${detail})`}`)
    this.name = "OAuthVerificationError"
    this.reason = reason
  }
}

/** An operation-level control helper was called for an operation that is not control-signed. */
export class NotControlSignedError extends SigningError {
  readonly _tag = "NotControlSignedError" as const
  /** The operation id the helper was called with. */
  readonly operationId: string
  /** The operation's auth scheme, or `undefined` when the operation is unknown. */
  readonly scheme: string | undefined

  constructor(operationId: string, scheme: string | undefined) {
    super(
      scheme === undefined
        ? `unknown operation ${JSON.stringify(operationId.slice(0, 64))}`
        : `operation ${operationId} is signed with ${scheme}, not a control digest`
    )
    this.name = "NotControlSignedError"
    this.operationId = operationId.slice(0, 64)
    this.scheme = scheme
  }
}

/**
 * The cryptography a function needs is missing from this runtime: `node:crypto` for the
 * synchronous API (use the `...Async` functions, which fall back to WebCrypto), or WebCrypto.
 */
export class CryptoUnavailableError extends SigningError {
  readonly _tag = "CryptoUnavailableError" as const
  /** What is missing: `"node:crypto"`, `"webcrypto"`, or the unknown provider name given. */
  readonly provider: string

  constructor(provider: string) {
    super(
      provider === "node:crypto"
        ? "node:crypto is not available in this runtime: use the asynchronous API (signOAuthAsync, controlDigestAsync, ...), which runs on WebCrypto"
        : provider === "webcrypto"
          ? "WebCrypto (globalThis.crypto.subtle) is not available in this runtime"
          : `unknown crypto provider ${JSON.stringify(provider)}: expected "node" or "webcrypto"`
    )
    this.name = "CryptoUnavailableError"
    this.provider = provider
  }
}

/** Every concrete error of this package. */
export type AnySigningError =
  | CryptoUnavailableError
  | InvalidAmountError
  | UnknownCurrencyError
  | InvalidRequestError
  | WeakKeyError
  | KeyFormatError
  | ControlVerificationError
  | OAuthVerificationError
  | NotControlSignedError
