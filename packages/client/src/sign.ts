/**
 * The client's only door to cryptography: every digest and signature comes from
 * `@paykit/signing`. The pipeline hands this module wire values and gets back a `control` value or
 * an `Authorization` header; it never sees a key.
 *
 * @packageDocumentation
 */
import type { OperationAuth, OperationId } from "@paykit/contracts"
import { loadPrivateKey, signControl, signOAuth, verifyCallbackControl, type MinorUnits, type RsaPrivateKey } from "@paykit/signing"
import { Redacted } from "effect"
import type { PayClientConfig } from "./config"
import { MissingPrivateKey } from "./errors"

/** Signing material prepared once per client: the control key and the parsed RSA key. */
export interface SigningKeys {
  readonly controlKey: Redacted.Redacted<string>
  /** Parsed once (a `KeyObject` inside), never re-read per call. */
  readonly privateKey: RsaPrivateKey | undefined
}

/** Parses the private key once. Throws the signing package's typed key errors (no key material in them). */
export function prepareKeys(config: PayClientConfig): SigningKeys {
  return {
    controlKey: config.controlKey,
    privateKey: config.privateKeyPem === undefined ? undefined : loadPrivateKey(Redacted.value(config.privateKeyPem))
  }
}

/** What signing adds to a request: a `control` form field or an `Authorization` header. */
export type Signature =
  | { readonly kind: "control"; readonly control: string }
  | { readonly kind: "header"; readonly authorization: string }

/**
 * Signs one request as its operation's auth row says.
 *
 * @throws the signing package's typed errors (bad amount, unknown currency, missing key); the
 *   pipeline turns them into `InputError`.
 */
export function signRequest(
  operationId: OperationId,
  auth: OperationAuth,
  values: Readonly<Record<string, string>>,
  keys: SigningKeys,
  context: { readonly endpointId: string; readonly url: string; readonly login: string; readonly minorUnits: MinorUnits }
): Signature {
  switch (auth.scheme) {
    case "control":
      return {
        kind: "control",
        control: signControl(operationId, values, { key: Redacted.value(keys.controlKey), endpointId: context.endpointId, minorUnits: context.minorUnits })
      }
    case "oauth-hmac-sha1":
      return {
        kind: "header",
        authorization: signOAuth({
          url: context.url,
          params: values,
          consumerKey: context.login,
          signatureMethod: "HMAC-SHA1",
          consumerSecret: Redacted.value(keys.controlKey)
        }).authorizationHeader
      }
    case "oauth-rsa-sha256": {
      if (keys.privateKey === undefined) throw new MissingPrivateKey({ field: "privateKeyPem" })
      return {
        kind: "header",
        authorization: signOAuth({
          url: context.url,
          params: values,
          consumerKey: context.login,
          signatureMethod: "RSA-SHA256",
          privateKey: keys.privateKey
        }).authorizationHeader
      }
    }
  }
}

/** Constant-time check of a callback's `control`; returns the failure reason or `undefined` when it matches. */
export function checkCallbackControl(
  values: { readonly status: string; readonly orderid: string; readonly client_orderid: string },
  received: string | undefined,
  keys: SigningKeys
): "missing" | "malformed" | "mismatch" | undefined {
  const result = verifyCallbackControl(values, received, Redacted.value(keys.controlKey))
  return result.ok ? undefined : (result.reason as "missing" | "malformed" | "mismatch")
}
