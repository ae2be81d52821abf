/**
 * The per-call options (`CallOptions`) and their checks before anything is read or sent: a bad one
 * is an `InputError` naming the option and its rule. An unchecked `deadlineMs` of `NaN` would mean
 * "no deadline at all" (every comparison with it is false), a negative `timeoutMs` a 1 ms attempt,
 * an empty `idempotencyKey` one key shared by every call that passed it.
 *
 * @packageDocumentation
 */

import * as Effect from "effect/Effect"
import type { GroupPathForm, ReconcilePolicy, RetryPolicy } from "../config"

/** Per-call options (the Promise facade and the Effect service take the same). */
export interface CallOptions {
  /** Overrides of the client's retry policy for this call. */
  readonly retry?: Partial<RetryPolicy> | undefined
  /** Per-attempt timeout in ms (also used by the reconciling `status`). */
  readonly timeoutMs?: number | undefined
  /** Send to the endpoint group instead of the endpoint (needs `endpointGroupId`); reconciliation asks there too. */
  readonly endpoint?: "endpoint" | "group" | undefined
  /** With `endpoint: "group"`: the path form for this call (default: the client's `groupPathForm`). */
  readonly groupPathForm?: GroupPathForm | undefined
  /** Overall limit of this call in ms, retries and reconciliation included (default: the client's `deadlineMs`). */
  readonly deadlineMs?: number | undefined
  /** Aborts the call; once bytes have left, the call reconciles (one `status` look) or ends in `OutcomeUnknown`. */
  readonly signal?: AbortSignal | undefined
  /** Money-moving calls: the key to replay or join (generated when absent, returned on every result and error). */
  readonly idempotencyKey?: string | undefined
  /** Overrides of the client's reconciliation policy for this call. */
  readonly reconcile?: Partial<ReconcilePolicy> | undefined
}

/** The option that breaks its rule, or `undefined`. */
export interface OptionIssue {
  readonly field: string
  readonly rule: string
}

const positive = (field: string, value: unknown): OptionIssue | undefined =>
  value === undefined || (typeof value === "number" && Number.isFinite(value) && value > 0) ? undefined : { field, rule: "must be a finite number of milliseconds above 0" }

const atLeastZero = (field: string, value: unknown): OptionIssue | undefined =>
  value === undefined || (typeof value === "number" && Number.isFinite(value) && value >= 0) ? undefined : { field, rule: "must be a finite number, 0 or more" }

// Duck-typed: a polyfilled or other realm's AbortSignal is as good as the global one.
const isSignal = (s: unknown): boolean =>
  typeof s === "object" && s !== null && typeof (s as { aborted?: unknown }).aborted === "boolean" && typeof (s as { addEventListener?: unknown }).addEventListener === "function"

/** The given idempotency key when it is usable (a string of 1–255 characters), else `undefined`. */
export function usableKey(key: unknown): string | undefined {
  return typeof key === "string" && key.length > 0 && key.length <= 255 ? key : undefined
}

/** Checks the per-call options (`CallOptions`); `undefined` when they are usable. */
export function checkCallOptions(options: {
  readonly deadlineMs?: unknown
  readonly timeoutMs?: unknown
  readonly idempotencyKey?: unknown
  readonly signal?: unknown
  readonly retry?: { readonly [k: string]: unknown } | undefined
  readonly reconcile?: { readonly [k: string]: unknown } | undefined
}): OptionIssue | undefined {
  const key = options.idempotencyKey
  if (key !== undefined && usableKey(key) === undefined) return { field: "idempotencyKey", rule: "must be a string of 1–255 characters" }
  if (options.signal !== undefined && !isSignal(options.signal)) return { field: "signal", rule: "must be an AbortSignal" }
  const retry = options.retry
  const reconcile = options.reconcile
  return positive("deadlineMs", options.deadlineMs) ??
    positive("timeoutMs", options.timeoutMs) ??
    (retry === undefined ? undefined : atLeastZero("retry.maxRetries", retry["maxRetries"]) ?? atLeastZero("retry.baseDelayMs", retry["baseDelayMs"]) ?? atLeastZero("retry.maxDelayMs", retry["maxDelayMs"])) ??
    (reconcile === undefined ? undefined : atLeastZero("reconcile.settleMs", reconcile["settleMs"]) ?? positive("reconcile.pollIntervalMs", reconcile["pollIntervalMs"]))
}
