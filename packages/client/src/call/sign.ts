/**
 * The client's only door to cryptography: every digest and signature comes from
 * `@paykit/signing`. The pipeline hands this module wire values and gets back a `control` value or
 * an `Authorization` header; it never sees a key.
 *
 * @packageDocumentation
 */
import { controlDigest, createHmacSigner, createRsaSigner, loadPrivateKey, verifyCallbackControlWithKeys, type MinorUnits, type OAuthSigner, type RsaPrivateKey } from "@paykit/signing"
import * as Redacted from "effect/Redacted"
import type { PayClientConfig } from "../config"
import { MissingPrivateKey } from "../errors"
import type { PreparedAuth } from "../operations/table"

/** Signing material prepared once per client: the control key and the parsed RSA key. */
export interface SigningKeys {
  /** The key requests are signed with: the first listed. */
  readonly controlKey: Redacted.Redacted<string>
  /** Every key a callback may be signed with, current first (a key rotation lists more than one). */
  readonly controlKeys: ReadonlyArray<Redacted.Redacted<string>>
  /** Parsed once (a `KeyObject` inside), never re-read per call. */
  readonly privateKey: RsaPrivateKey | undefined
  /**
   * OAuth signers by scheme and login (the configured login, or one a call overrides it with): the
   * HMAC key's pads and the consumer's encoded protocol parameters are prepared once, not per call.
   */
  readonly signers: Map<string, OAuthSigner>
}

// A client signs as its own login; a few per-call overrides are cached too, and past this many
// the cache is cleared rather than grown (ever-new logins would be a caller's bug, not a workload).
const SIGNER_CACHE_LIMIT = 16

/** Parses the private key once. Throws the signing package's typed key errors (no key material in them). */
export function prepareKeys(config: PayClientConfig): SigningKeys {
  return {
    controlKey: config.controlKey,
    controlKeys: config.controlKeys ?? [config.controlKey],
    privateKey: config.privateKeyPem === undefined ? undefined : loadPrivateKey(Redacted.value(config.privateKeyPem)),
    signers: new Map()
  }
}

function signerFor(keys: SigningKeys, scheme: "oauth-hmac-sha1" | "oauth-rsa-sha256", login: string): OAuthSigner {
  const id = `${scheme} ${login}`
  const cached = keys.signers.get(id)
  if (cached !== undefined) return cached
  let signer: OAuthSigner
  if (scheme === "oauth-hmac-sha1") signer = createHmacSigner({ consumerKey: login, consumerSecret: Redacted.value(keys.controlKey) })
  else {
    if (keys.privateKey === undefined) throw new MissingPrivateKey({ field: "privateKeyPem" })
    signer = createRsaSigner({ consumerKey: login, privateKey: keys.privateKey })
  }
  if (keys.signers.size >= SIGNER_CACHE_LIMIT) keys.signers.clear()
  keys.signers.set(id, signer)
  return signer
}

/** What signing adds to a request: a `control` form field or an `Authorization` header. */
export type Signature =
  | { readonly kind: "control"; readonly control: string }
  | { readonly kind: "header"; readonly authorization: string }

/**
 * Signs one request as its operation's auth row says: a control digest over the row's fields in
 * order (the spec's C1–C8, or a `request()` call's own list; `amount` in minor units, `endpointId`
 * the path's), or an OAuth `Authorization` header.
 *
 * @throws the signing package's typed errors (bad amount, unknown currency, missing key); the
 *   pipeline turns them into `InputError`.
 */
export function signRequest(
  auth: PreparedAuth,
  values: Readonly<Record<string, string>>,
  keys: SigningKeys,
  context: {
    readonly endpointId: string
    /** The client's base URL and the operation's path (`{endpointId}` in it): the OAuth URL is built only when signed. */
    readonly baseUrl: string
    readonly path: string
    readonly login: string
    readonly minorUnits: MinorUnits
  }
): Signature {
  if (auth.scheme === "control") {
    return {
      kind: "control",
      control: controlDigest(auth, values, Redacted.value(keys.controlKey), { endpointId: context.endpointId, minorUnits: context.minorUnits })
    }
  }
  if (auth.scheme === "oauth-rsa-sha256" && keys.privateKey === undefined) throw new MissingPrivateKey({ field: "privateKeyPem" })
  const url = context.baseUrl + context.path.replace("{endpointId}", context.endpointId)
  return { kind: "header", authorization: signerFor(keys, auth.scheme, context.login).sign({ url, params: values }).authorizationHeader }
}

/**
 * Constant-time check of a callback's `control` against every listed key: the index of the key that
 * matched (0 is the current key), or the failure reason. Never a key.
 */
export function checkCallbackControl(
  values: { readonly status: string; readonly orderid: string; readonly client_orderid: string },
  received: string | undefined,
  keys: SigningKeys
): { readonly keyIndex: number } | "missing" | "malformed" | "mismatch" {
  const result = verifyCallbackControlWithKeys(values, received, keys.controlKeys.map((key) => Redacted.value(key)))
  return result.ok ? { keyIndex: result.keyIndex } : (result.reason as "missing" | "malformed" | "mismatch")
}
