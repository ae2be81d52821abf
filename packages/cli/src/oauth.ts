/**
 * An OAuth 1.0a signature with its parts: each parameter of the base string (where it came from,
 * its value, its encoded form), the base string URI, the normalized parameters and the base string.
 * The signature is `@paykit/signing`'s `signOAuth` and the parts its `explainOAuth` (checked to give
 * the base string that was signed); this module only adds the key note and the masking.
 *
 * @packageDocumentation
 */
import { isCardNumberField, isCardSecurityField, maskPan } from "@paykit/contracts/card-data"
import type { OperationId } from "@paykit/contracts/operations"
import { explainOAuth as explainOAuthBaseString, loadPrivateKey, percentEncode, signOAuth, type OAuthSignRequest, type ParamPair } from "@paykit/signing"
import { Redacted } from "./effect-free"
import { CheckFailed } from "./errors"
import { signingInputError } from "./signing-errors"

/** One parameter of the signature base string. */
export interface OAuthParameter {
  /** `body` (form field), `query` (the URL's query) or `oauth` (a protocol parameter). */
  readonly source: "body" | "query" | "oauth"
  /** The parameter's name, decoded. */
  readonly name: string
  /** Its value, decoded (masked for card fields unless asked otherwise). */
  readonly value: string
  /** `enc(name)=enc(value)` as it appears in the normalized parameters. */
  readonly encoded: string
}

/** An OAuth signature and how it was made. */
export interface OAuthExplanation {
  /** The operation signed. */
  readonly operationId: OperationId
  /** The operation's auth scheme from the operation table. */
  readonly scheme: "oauth-hmac-sha1" | "oauth-rsa-sha256"
  /** `oauth_signature_method`. */
  readonly signatureMethod: "HMAC-SHA1" | "RSA-SHA256"
  /** The HTTP method (the payment API always POSTs). */
  readonly method: "POST"
  /** The request URL as given. */
  readonly url: string
  /** The URL as the base string has it (RFC 5849 §3.4.1.2). */
  readonly baseStringUri: string
  /** In base-string order: sorted by encoded name, then encoded value. */
  readonly parameters: ReadonlyArray<OAuthParameter>
  /** The parameters joined as the base string has them (RFC 5849 §3.4.1.3.2). */
  readonly normalizedParameters: string
  /** `POST&enc(base string URI)&enc(normalized parameters)`: what was signed. */
  readonly baseString: string
  /** Base64, before the header's percent-encoding. */
  readonly signature: string
  /** The `Authorization` header value to send. */
  readonly authorizationHeader: string
  /** How the signing key was made, in words (never the key). */
  readonly keyNote: string
}

/** Inputs of {@link explainOAuth} besides the form body. */
export interface OAuthInputs {
  /** The full request URL (its query is signed too). */
  readonly url: string
  /** `oauth_consumer_key`: the merchant login. */
  readonly consumerKey: string
  /** The control key: the HMAC-SHA1 key. */
  readonly controlKey?: Redacted.Redacted<string> | undefined
  /** The PEM private key for RSA-SHA256. */
  readonly privateKeyPem?: Redacted.Redacted<string> | undefined
  /** Where the private key came from, for the explanation. */
  readonly privateKeyFile?: string | undefined
  /** A fixed `oauth_nonce` (default random). */
  readonly nonce?: string | undefined
  /** A fixed `oauth_timestamp` in seconds (default now). */
  readonly timestamp?: string | undefined
  /** The header's `realm` (not signed). */
  readonly realm?: string | undefined
  /** An OAuth token, for general RFC 5849 requests only (the payment API uses none). */
  readonly token?: OAuthTokenInput | undefined
}

/** An OAuth token for {@link OAuthInputs.token}. */
export interface OAuthTokenInput {
  /** `oauth_token`. */
  readonly key: string
  /** The token secret (the HMAC key's second half). */
  readonly secret: Redacted.Redacted<string>
}

/**
 * Signs and explains an OAuth-signed operation's request (`body` in sent order, duplicates kept).
 *
 * @throws {UsageError} for an input that cannot be signed (a reserved name, a bad URL or key).
 */
export function explainOAuth(
  operationId: OperationId,
  scheme: "oauth-hmac-sha1" | "oauth-rsa-sha256",
  body: ReadonlyArray<ParamPair>,
  inputs: OAuthInputs
): OAuthExplanation {
  try {
    const base = {
      url: inputs.url,
      params: body,
      consumerKey: inputs.consumerKey,
      ...(inputs.token === undefined ? {} : { token: { key: inputs.token.key, secret: Redacted.value(inputs.token.secret) } })
    }
    let request: OAuthSignRequest
    let keyNote: string
    if (scheme === "oauth-hmac-sha1") {
      request = { ...base, signatureMethod: "HMAC-SHA1", consumerSecret: Redacted.value(inputs.controlKey!) }
      keyNote = `HMAC-SHA1 key: enc(control key) + "&"${inputs.token === undefined ? "" : " + enc(token secret)"} (not shown)`
    } else {
      const privateKey = loadPrivateKey(Redacted.value(inputs.privateKeyPem!))
      request = { ...base, signatureMethod: "RSA-SHA256", privateKey }
      keyNote = `RSASSA-PKCS1-v1_5 with SHA-256, private key ${inputs.privateKeyFile ?? ""} (${privateKey.bits} bits, not shown)`.replace("key  (", "key (")
    }
    const signed = signOAuth(request, {
      ...(inputs.nonce === undefined ? {} : { nonce: inputs.nonce }),
      ...(inputs.timestamp === undefined ? {} : { timestamp: inputs.timestamp }),
      ...(inputs.realm === undefined ? {} : { realm: inputs.realm })
    })
    const oauth = Object.entries(signed.oauthParams).filter((e): e is [string, string] => typeof e[1] === "string")
    const x = explainOAuthBaseString({ url: inputs.url, body, oauth })
    if (x.baseString !== signed.baseString) {
      throw new CheckFailed({ reason: `the explained parameters do not give the base string @paykit/signing signed for ${operationId}` })
    }
    const parameters: ReadonlyArray<OAuthParameter> = x.parameters
    return {
      operationId,
      scheme,
      signatureMethod: scheme === "oauth-hmac-sha1" ? "HMAC-SHA1" : "RSA-SHA256",
      method: "POST",
      url: inputs.url,
      baseStringUri: x.baseStringUri,
      parameters,
      normalizedParameters: x.normalizedParameters,
      baseString: signed.baseString,
      signature: signed.signature,
      authorizationHeader: signed.authorizationHeader,
      keyNote
    }
  } catch (error) {
    throw signingInputError(error, {})
  }
}

// Other spellings a callback or a hand-written body may use (`card_number`, `cvv`, `cvc2`).
const CARD_FIELD = /card[-_]?(number|no)$|^cvv|^cvc/i
const SECURITY_FIELD = /^cvv|^cvc/i

/** Whether a field holds card data that output masks (PAN: BIN and last four; CVV: nothing). */
export const isCardField = (name: string): boolean => isCardNumberField(name) || isCardSecurityField(name) || CARD_FIELD.test(name)

/** The displayed form of a card field's value: `maskPan` for a card number, `*` for a CVV. */
export function maskCardValue(name: string, value: string): string {
  if (isCardSecurityField(name) || SECURITY_FIELD.test(name)) return "*".repeat(Math.max(3, value.length))
  return maskPan(value)
}

/** The explanation with card numbers and CVVs masked in every displayed field. */
export function maskOAuthExplanation(x: OAuthExplanation): OAuthExplanation & { readonly cardDataMasked: boolean } {
  const masked = x.parameters.some((p) => isCardField(p.name))
  if (!masked) return { ...x, cardDataMasked: false }
  const parameters = x.parameters.map((p) => {
    if (!isCardField(p.name)) return p
    const value = maskCardValue(p.name, p.value)
    return { ...p, value, encoded: `${percentEncode(p.name)}=${percentEncode(value)}` }
  })
  const normalizedParameters = parameters.map((p) => p.encoded).join("&")
  return {
    ...x,
    parameters,
    normalizedParameters,
    baseString: `${x.method}&${percentEncode(x.baseStringUri)}&${percentEncode(normalizedParameters)}`,
    cardDataMasked: true
  }
}
