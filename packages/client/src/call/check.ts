/**
 * What a call is before anything is read or sent: its input decoded against the operation's
 * Schema, its per-call options checked, the endpoint and path form chosen, and what the intent
 * ledger keeps of it. The first step of every call, the Effect and the Promise entry alike.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { checkCallOptions, usableKey, type CallOptions } from "./options"
import { describeIssue } from "./classify"
import type { PayClientConfig } from "../config"
import { InputError } from "../errors"
import { newIdempotencyKey, type BeginBound, type IntentMeta } from "../intents/ledger"
import { preparedOperations, type PreparedOperation } from "../operations/table"
import { statusQuery } from "../intents/reconcile"
import type { SigningKeys } from "./sign"

// The signing package's errors carry no secrets or values; keep their field and rule/reason only.
export function signingFailure(operation: string, error: unknown): InputError {
  const e = error as { field?: unknown; rule?: unknown; reason?: unknown; currency?: unknown; _tag?: unknown }
  const field = typeof e.field === "string" ? e.field : typeof e.currency === "string" ? "currency" : "input"
  const rule = typeof e.rule === "string" ? e.rule : typeof e.reason === "string" ? e.reason : e._tag === "MissingPrivateKey" ? "required for OAuth RSA-SHA256 operations" : typeof e._tag === "string" ? e._tag : "cannot be signed"
  return new InputError({ operation, field, rule })
}

/**
 * The input error a call ends with before anything is sent; a money call's carries its key. A
 * function of its own rather than a closure made per call: almost every call passes.
 */
const inputFailure = (op: PreparedOperation, options: CallOptions, field: string, rule: string): Checked => ({
  failure: Effect.fail(new InputError({ operation: op.method, field, rule, idempotencyKey: op.retry === "reconcile" ? (usableKey(options.idempotencyKey) ?? newIdempotencyKey()) : undefined }))
})

// The options of a call given none (nothing to check).
export const NO_OPTIONS: CallOptions = {}

/** A checked call: what it sends, or the input error it ends with. */
export type Checked =
  | { readonly op: PreparedOperation; readonly values: Readonly<Record<string, string>>; readonly endpointId: string; readonly failure?: undefined }
  | { readonly failure: Effect.Effect<never, InputError> }

/**
 * Checks one call: the operation's prepared row, the decoded wire values and the endpoint id, or
 * the `InputError` the call ends with before anything is read or sent.
 */
export function checkCall(config: PayClientConfig, keys: SigningKeys, operation: OperationId, input: unknown, options: CallOptions): Checked {
  const op = preparedOperations[operation]
  if (typeof input !== "object" || input === null) return inputFailure(op, options, "input", "expected an object of wire fields")
  const badOption = options === NO_OPTIONS ? undefined : checkCallOptions(options)
  if (badOption !== undefined) return inputFailure(op, options, badOption.field, badOption.rule)
  const raw = input as Record<string, unknown>
  const filled = op.hasLogin && raw["login"] === undefined ? { ...raw, login: config.login } : raw
  const decoded = op.decodeInput(filled)
  if (Either.isLeft(decoded)) {
    const { field, rule } = describeIssue(decoded.left)
    return inputFailure(op, options, field, rule)
  }
  // Checked before anything is read or sent (calls on an existing order read the order first).
  if (op.auth.scheme === "oauth-rsa-sha256" && keys.privateKey === undefined) return inputFailure(op, options, "privateKeyPem", "required for OAuth RSA-SHA256 operations")
  const endpointId = options.endpoint === "group" ? (config.endpointGroupId ?? config.endpointId) : config.endpointId
  if (groupPathOf(config, options) && config.endpointGroupId === undefined) return inputFailure(op, options, "endpointGroupId", "required for the /group/{endpointGroupId} path form")
  return { op, values: decoded.right, endpointId }
}

/** Whether a call goes to the gateway's `/{command}/group/{endpointGroupId}` path form (docs/decisions.md#16-endpoint-groups). */
export function groupPathOf(config: PayClientConfig, options: CallOptions): boolean {
  return options.endpoint === "group" && (options.groupPathForm ?? config.groupPathForm) === "group-path"
}

/** What the ledger keeps of a money call beside its key (a store shows it to `recover()` and callbacks). */
export function metaOf(op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string): IntentMeta {
  return {
    operation: op.id,
    method: op.method,
    client_orderid: statusQuery(op, values)?.client_orderid ?? "",
    orderid: values["orderid"],
    amount: values["amount"],
    currency: values["currency"],
    endpoint: endpointId
  }
}

/** A wait on a key (another instance's, or a double click's) ends with the call's deadline and signal. */
export function boundOf(config: PayClientConfig, options: CallOptions): BeginBound {
  return { deadlineMs: options.deadlineMs ?? config.deadlineMs, windowMs: windowOf(config, options), signal: options.signal }
}

/**
 * A call's processing window: how long after a send an unchanged order must stay unchanged before
 * that proves the send did not land. A longer per-call timeout lets the gateway hold a request
 * longer: the window grows with it.
 */
export function windowOf(config: PayClientConfig, options: CallOptions): number {
  return options.reconcile?.settleMs ?? Math.max(config.reconcile.settleMs, options.timeoutMs ?? 0)
}
