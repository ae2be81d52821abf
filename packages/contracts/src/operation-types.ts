/**
 * Types of the operation table. The table itself is generated from `spec/openapi.yaml` into
 * `src/generated/operations.ts`; these types are hand-written so the generator has a fixed target.
 *
 * @packageDocumentation
 */

/** A control-digest code of the interface (C1–C7) or of PayKit's decisions (C8). */
export type ControlCode = "C1" | "C2" | "C3" | "C4" | "C5" | "C6" | "C7" | "C8"

/** The control scheme: SHA-1 over the listed values in order, then the merchant control key. */
export interface ControlAuth {
  /** Discriminates the auth scheme. */
  readonly scheme: "control"
  /** The scheme's code, C1–C8. */
  readonly code: ControlCode
  /**
   * Wire names of the values, in digest order. `endpointId` is the path parameter; `amount` enters
   * in minor units of the request's `currency`; a field that is absent enters as the empty string
   * (C4's optional `amount`/`currency`, C7's optional `orderid`).
   */
  readonly fields: ReadonlyArray<string>
}

/** OAuth 1.0a request signing (RFC 5849) with HMAC-SHA1 keyed by the merchant control key. */
export interface OAuthHmacAuth {
  /** Discriminates the auth scheme. */
  readonly scheme: "oauth-hmac-sha1"
}

/** OAuth 1.0a request signing (RFC 5849) with RSA-SHA256 by the merchant's private key. */
export interface OAuthRsaAuth {
  /** Discriminates the auth scheme. */
  readonly scheme: "oauth-rsa-sha256"
}

/** How an operation is authenticated. */
export type OperationAuth = ControlAuth | OAuthHmacAuth | OAuthRsaAuth

/** The auth scheme names used in `x-paykit-auth`. */
export type AuthScheme = OperationAuth["scheme"]

/**
 * What a client may do when the outcome of a send is unknown.
 * - `read`: nothing changes on the gateway; resending is safe.
 * - `reconcile`: the call may move money or state; ask `status` by `client_orderid` before any resend.
 */
export type RetryClass = "read" | "reconcile"

/** Path family of an operation, as the interface's versioning section names them. */
export type VersionFamily = "3ds/v1" | "v2" | "v4"

/** One row of the operation table. */
export interface OperationSpec {
  /** The interface's operation name, e.g. `SALE`. */
  readonly operationId: string
  /** The client method name, e.g. `sale`. */
  readonly method: string
  /** Path template relative to the base URL, with `{endpointId}`. */
  readonly path: string
  /** The path family: `v2`, `v4` or `3ds/v1`. */
  readonly family: VersionFamily
  /** How requests to the operation are authenticated. */
  readonly auth: OperationAuth
  /** Name of the request schema in `components.schemas`. */
  readonly request: string
  /** Name of the 200 response schema in `components.schemas`. */
  readonly response: string
  /** How the client may retry the operation. */
  readonly retry: RetryClass
  /** The media type of every reply (`x-paykit-accept`): the request's `Accept` header must be exactly this. */
  readonly accept: "application/vnd.pay+json"
  /** The spec's one-line summary of the operation. */
  readonly summary: string
  /**
   * The transaction types the order it creates shows as its first transaction
   * (`x-paykit-creates`); empty when it creates no order.
   */
  readonly creates: ReadonlyArray<string>
  /** Whether the simulator's decline-next fault can decide its outcome (`x-paykit-declinable`). */
  readonly declinable: boolean
}
