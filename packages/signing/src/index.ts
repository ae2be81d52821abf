/**
 * `@paykit/signing`: the gateway's request authentication, without Effect.
 *
 * Two APIs give the same results on every vector:
 * - synchronous, on `node:crypto` (Node, Bun, Deno): `controlDigest`, `signOAuth`, ...;
 * - asynchronous, on `node:crypto` where it exists and on WebCrypto everywhere else (Cloudflare
 *   workerd, browsers): `controlDigestAsync`, `signOAuthAsync`, `importPrivateKey`, ..., each
 *   returning a Promise because SubtleCrypto does. `createOAuthVerifier` is asynchronous anyway and
 *   picks the provider itself. No module imports `node:crypto` statically, so the package loads in
 *   every runtime; a synchronous function called where `node:crypto` is missing throws
 *   `CryptoUnavailableError`.
 *
 * - Control digests C1–C8 (`controlDigest`, `verifyControl`, and per operation `signControl`,
 *   `verifyOperationControl` driven by the operation table of `@paykit/contracts`).
 * - Callback control (`callbackControl`, `verifyCallbackControl`), and during a key rotation
 *   `verifyCallbackControlWithKeys` (current key first; reports which key matched by index).
 * - Minor units (`toMinorUnits`, `minorUnitsExponent`, `currencyExponent`): cents (× 100) by default,
 *   ISO 4217 exponents with `{ minorUnits: "iso4217" }`.
 * - OAuth 1.0a per RFC 5849 with HMAC-SHA1 and RSA-SHA256 (`signOAuth`, `createOAuthVerifier`).
 * - RSA keys (`loadPrivateKey`, `loadPkcs12PrivateKey`, `loadPublicKey`).
 * - Explanations as data (`explainControl`, `explainOAuth`): the parts of a control digest input
 *   and the parameters of an OAuth base string, for a caller to show (no key, no digest).
 *
 * Verification functions return `{ ok: true } | { ok: false, reason, error }`: a rejected request
 * is an expected outcome on a server, and `error` is a typed error for callers who prefer to
 * throw. Functions throw typed errors (all extending `SigningError`, each with a `_tag`) only for
 * inputs that cannot be signed or digested at all.
 *
 * @packageDocumentation
 */
export {
  type AnySigningError,
  type ControlFailureReason,
  ControlVerificationError,
  CryptoUnavailableError,
  InvalidAmountError,
  type InvalidAmountRule,
  InvalidRequestError,
  type InvalidRequestRule,
  KeyFormatError,
  type KeyFormatReason,
  NotControlSignedError,
  type OAuthFailureReason,
  OAuthVerificationError,
  SigningError,
  UnknownCurrencyError,
  type UnknownCurrencyReason,
  WeakKeyError
} from "./errors"
export {
  currencyExponent,
  DEFAULT_MINOR_UNITS,
  minorUnitsExponent,
  minorUnitsMode,
  NO_MINOR_UNIT_CODES,
  toMinorUnits,
  type MinorUnits,
  type MinorUnitsOptions
} from "./minor-units"
export {
  controlDigest,
  verifyControl,
  type ControlOptions,
  type ControlScheme,
  type ControlValues,
  type ControlVerifyResult,
  type VerifyResult
} from "./control"
export {
  controlSchemeOf,
  signControl,
  verifyOperationControl,
  type OperationControlOptions
} from "./operation-control"
export { callbackControl, verifyCallbackControl, type CallbackControlValues } from "./callback"
export {
  controlKeyList,
  signingKey,
  verifyCallbackControlWithKeys,
  verifyCallbackControlWithKeysAsync,
  type ControlKeys,
  type RotatedVerifyResult
} from "./rotation"
export { percentDecode, percentEncode } from "./oauth/percent"
export type { ParamPair, ParamsInput } from "./oauth/params"
export { baseStringUri, normalizeParameters, signatureBaseString, type BaseStringParts } from "./oauth/base-string"
export {
  authorizationHeader,
  parseOAuthHeader,
  type OAuthProtocolParams,
  type ParsedOAuthHeader,
  type ParseOAuthHeaderResult
} from "./oauth/header"
export {
  createHmacSigner,
  createRsaSigner,
  generateNonce,
  signOAuth,
  type HmacSha1SignRequest,
  type HmacSignerOptions,
  type OAuthSignature,
  type OAuthSigner,
  type OAuthSignerRequest,
  type OAuthSignOptions,
  type OAuthSignRequest,
  type OAuthToken,
  type RsaSha256SignRequest,
  type RsaSignerOptions,
  type SignatureMethod
} from "./oauth/sign"
export {
  createOAuthVerifier,
  verifyOAuth,
  type OAuthConsumer,
  type OAuthVerifier,
  type OAuthVerifierOptions,
  type OAuthVerifyExpectations,
  type OAuthVerifyRequest,
  type OAuthVerifyResult
} from "./oauth/verify"
export { InMemoryNonceStore, type InMemoryNonceStoreOptions, type NonceStore } from "./oauth/nonce-store"
export {
  loadPrivateKey,
  loadPublicKey,
  MIN_RSA_BITS,
  RsaPrivateKey,
  RsaPublicKey,
  type LoadPrivateKeyOptions
} from "./keys"
export { loadPkcs12PrivateKey } from "./pkcs12"
export {
  explainControl,
  explainOAuth,
  explainOAuthParameters,
  type ControlAmount,
  type ControlExplainOptions,
  type ControlExplanationData,
  type ControlExplanationPart,
  type OAuthExplainRequest,
  type OAuthExplanationData,
  type OAuthExplanationParameter,
  type OAuthParameterSources
} from "./explain"
export {
  callbackControlAsync,
  controlDigestAsync,
  signControlAsync,
  signOAuthAsync,
  verifyCallbackControlAsync,
  verifyControlAsync,
  verifyOperationControlAsync,
  type OAuthSignRequestAsync,
  type RsaSha256SignRequestAsync
} from "./async"
export { defaultCryptoProvider, type CryptoOptions, type CryptoProvider } from "./crypto/runtime"
export { importPrivateKey, importPublicKey, WebCryptoPrivateKey, WebCryptoPublicKey } from "./crypto/webcrypto"
