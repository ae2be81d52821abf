import { operations, type ControlAuth, type OperationId } from "@paykit/contracts/operations"
import { controlDigest, verifyControl, type ControlValues, type ControlVerifyResult } from "./control"
import type { MinorUnits } from "./minor-units"
import { NotControlSignedError } from "./errors"

/** Key and path parameter of an operation-level control digest. */
export interface OperationControlOptions {
  /** The merchant control key. */
  readonly key: string
  /** The `endpointId` path parameter (endpoint or endpoint-group id). */
  readonly endpointId?: string | number | bigint
  /** How `amount` enters the digest: `"cents"` (default) or `"iso4217"`; see `MinorUnits`. */
  readonly minorUnits?: MinorUnits
}

/**
 * The operation's control scheme from the operation table of `@paykit/contracts` (generated from
 * the spec), so the field order of each operation is written in exactly one place.
 *
 * @throws {NotControlSignedError} for an unknown operation or one signed with OAuth.
 */
export function controlSchemeOf(operationId: OperationId): ControlAuth {
  const row = Object.prototype.hasOwnProperty.call(operations, operationId)
    ? operations[operationId]
    : undefined
  if (row === undefined) throw new NotControlSignedError(String(operationId), undefined)
  const auth = row.auth
  if (auth.scheme !== "control") throw new NotControlSignedError(operationId, auth.scheme)
  return auth
}

/**
 * The `control` value of a request to a control-signed operation; `params` is the form body.
 * `amount` enters in cents (× 100) unless `options.minorUnits` is `"iso4217"`, where the body's
 * `currency` scales it.
 *
 * @example
 * signControl("SALE", { client_orderid: "902B4FF5", amount: "10.42", currency: "USD",
 *   email: "john.smith@gmail.com" }, { key: "B17F59B4-A7DC-41B4-8FF9-37D986B43D20", endpointId: 1111 })
 * // → "c6bdd88a78834ef4b863b088827a459f039e8257"
 *
 * @throws {NotControlSignedError} when the operation is not control-signed.
 * @throws the typed errors of `controlDigest` (amount, currency, missing endpointId).
 */
export function signControl(operationId: OperationId, params: ControlValues, options: OperationControlOptions): string {
  return controlDigest(controlSchemeOf(operationId), params, options.key, options)
}

/**
 * Verifies the `control` field of a received form body (for the simulator), accepting either hex
 * case, in constant time. Returns a result as `verifyControl` does.
 *
 * @throws {NotControlSignedError} when the operation is not control-signed.
 * @throws the typed errors of `controlDigest` when the body cannot be digested.
 */
export function verifyOperationControl(
  operationId: OperationId,
  params: ControlValues,
  options: OperationControlOptions
): ControlVerifyResult {
  return verifyControl(controlSchemeOf(operationId), params, params["control"], options.key, options)
}
