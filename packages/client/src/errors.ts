/**
 * Every error of `@paykit/client`, in one place. Each is a `Data.TaggedError`, so it travels in the
 * Effect error channel, can be matched with `Effect.catchTag`, and carries a `_tag` naming its kind
 * (the Promise facade rejects with these very objects).
 *
 * Rule for every class: no control key, private key, PAN or CVV ever goes into a field or message.
 * Messages name fields and rules, never values.
 *
 * @packageDocumentation
 */
import * as Data from "effect/Data"
import type { StoreError, StoreInputError } from "./store/types"

/** The caller's input broke the contract Schema (or signing could not digest it); nothing was sent. */
export class InputError extends Data.TaggedError("InputError")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** Wire name of the offending field (or `"input"` when the whole value is not an object). */
  readonly field: string
  /** The rule it broke, e.g. `Expected a string matching ^[0-9]{3,4}$ (value not shown)`. */
  readonly rule: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: ${this.field}: ${this.rule}`
  }
}

/**
 * The gateway answered 400 with a validation or lifecycle `error-code` (e.g. `capture-not-allowed`),
 * or 404: no operation at the path the call used (`unknown-path`, the path in `errorMessage`).
 */
export class GatewayValidationError extends Data.TaggedError("GatewayValidationError")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** The gateway's `error-code`. */
  readonly errorCode: string
  /** The gateway's `error-message` (names the field and the rule). */
  readonly errorMessage: string
  /** `validation` or `lifecycle` (or `unknown` for a code the contracts do not list). */
  readonly category: string
  /** The gateway's `serial-number` of the reply, when it sent one. */
  readonly serialNumber?: string | undefined
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: ${this.errorCode}: ${this.errorMessage}`
  }
}

/**
 * The gateway rejected our signature or credentials: a 400 whose `error-code` is of category `auth`,
 * or HTTP 401/403 (the real gateway answers 403 to a refused OAuth signature).
 */
export class AuthenticationError extends Data.TaggedError("AuthenticationError")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** The gateway's `error-code`. */
  readonly errorCode: string
  /** The gateway's `error-message` (names the field and the rule). */
  readonly errorMessage: string
  /** The gateway's `serial-number` of the reply, when it sent one. */
  readonly serialNumber?: string | undefined
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: authentication refused (${this.errorCode})`
  }
}

/**
 * The gateway answered 5xx, 408 or 429 (transient). The request may or may not have been processed:
 * a money-moving call never ends with this error, it reconciles instead.
 */
export class GatewayServerError extends Data.TaggedError("GatewayServerError")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** HTTP status code of the reply. */
  readonly httpStatus: number
  /** The gateway's `error-code`. */
  readonly errorCode: string
  /** The gateway's `error-message` (names the field and the rule). */
  readonly errorMessage: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: gateway error ${this.httpStatus} (${this.errorCode})`
  }
}

/**
 * The request failed on the network. `mayHaveReachedGateway` is `false` only when the failure
 * provably happened before a byte was sent (connection refused, DNS failure), the one case where
 * resending a money-moving call is safe without asking `status` first.
 */
export class TransportError extends Data.TaggedError("TransportError")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** `false` only when the request provably never left this process. */
  readonly mayHaveReachedGateway: boolean
  /** The system error code when there is one (`ECONNRESET`, `ECONNREFUSED`…). */
  readonly code: string
  /** What failed, without any request or reply content. */
  readonly reason: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: transport failure ${this.code} (${this.mayHaveReachedGateway ? "may have reached the gateway" : "not sent"})`
  }
}

/** No reply within the per-attempt timeout (or the call's deadline). The request may have been processed. */
export class Timeout extends Data.TaggedError("Timeout")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** The per-attempt timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: no reply within ${this.timeoutMs} ms`
  }
}

/** The reply is not what the spec says (wrong status code, not JSON, or fails the response Schema). */
export class DecodeError extends Data.TaggedError("DecodeError")<{
  /** The call's idempotency key (given or generated); absent for reads. */
  readonly idempotencyKey?: string | undefined
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** HTTP status code of the reply. */
  readonly httpStatus: number
  /** Where the reply broke the Schema; never the reply body itself. */
  readonly issue: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: reply ${this.httpStatus} does not match the spec: ${this.issue}`
  }
}

/** A callback whose `control` is missing, malformed or does not match, or whose fields do not decode. */
export class CallbackSignatureError extends Data.TaggedError("CallbackSignatureError")<{
  /** Why the callback was refused: no `control`, a malformed one, a wrong one, or fields that do not decode. */
  readonly reason: "missing" | "malformed" | "mismatch" | "invalid-fields"
  /** Where the fields broke the callback Schema (for `invalid-fields`). */
  readonly issue?: string | undefined
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `callback refused: ${this.reason}${this.issue === undefined ? "" : `: ${this.issue}`}`
  }
}

/**
 * A money-moving call's outcome could not be proven from the gateway's state. `mayHaveApplied`
 * says whether the call may have taken effect (`false` only when the order was seen unchanged after
 * the processing window); `statusBefore`/`statusAfter` are the order as seen before sending and last
 * seen after; `next` says what to do. Calling again with the same `idempotencyKey` is always safe: the
 * client reconciles against `statusBefore` before it sends anything.
 */
export class OutcomeUnknown extends Data.TaggedError("OutcomeUnknown")<{
  /** The client method of the call, e.g. `sale` or `capture`. */
  readonly operation: string
  /** The merchant's order id (`client_orderid`). */
  readonly client_orderid: string
  /** The gateway's order id (`orderid`), when known. */
  readonly orderid?: string | undefined
  /** `_tag` of the failure that made the outcome unknown. */
  readonly lastError: string
  /** Whether the call may have taken effect (`false`: proven not applied, safe to send again). */
  readonly mayHaveApplied: boolean
  /** The order's `status` reply before sending (calls on an existing order), if taken. */
  readonly statusBefore?: StatusSnapshot | undefined
  /** The order's last `status` reply after the failure, if any could be read. */
  readonly statusAfter?: StatusSnapshot | undefined
  /** What to do next, in words. */
  readonly next: string
  /** The call's idempotency key: call again with it to resume instead of sending blindly. */
  readonly idempotencyKey: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: outcome unknown for client_orderid ${this.client_orderid} (${this.lastError}, ${this.mayHaveApplied ? "may have applied" : "not applied"}): ${this.next}`
  }
}

/**
 * Reconciliation found an order that does not match the request: the gateway's amount, currency or
 * transaction type differs from what this call asked for (e.g. a 500 on a 99.00 sale whose
 * `client_orderid` names an older 10.00 order). Nothing is resent.
 */
export class ReconcileConflict extends Data.TaggedError("ReconcileConflict")<{
  /** The client method of the call. */
  readonly operation: string
  /** The merchant's order id (`client_orderid`). */
  readonly client_orderid: string
  /** The gateway's order id found. */
  readonly orderid?: string | undefined
  /** Which field differs: `amount`, `currency` or `transaction-type`. */
  readonly field: "amount" | "currency" | "transaction-type"
  /** What the request asked for. */
  readonly expected: string
  /** What the gateway's order shows. */
  readonly found: string
  /** The order's `status` reply that was compared. */
  readonly statusAfter?: StatusSnapshot | undefined
  /** The call's idempotency key. */
  readonly idempotencyKey: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: the gateway's order ${this.orderid ?? this.client_orderid} does not match the request: ${this.field} expected ${this.expected}, found ${this.found}`
  }
}

/** The caller's `AbortSignal` fired, its deadline passed or its Effect was interrupted before anything was sent. Nothing was sent. */
export class Cancelled extends Data.TaggedError("Cancelled")<{
  /** The client method of the call. */
  readonly operation: string
  /** `signal`, `deadline`, or `interrupted` (the Effect running the call was interrupted). */
  readonly reason: "signal" | "deadline" | "interrupted"
  /** The call's idempotency key, for money-moving calls. */
  readonly idempotencyKey?: string | undefined
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: cancelled by ${this.reason} before sending`
  }
}

/** A v4 (RSA) operation was called on a client configured without `privateKeyPem`. */
export class MissingPrivateKey extends Data.TaggedError("MissingPrivateKey")<{
  /** The missing configuration field. */
  readonly field: "privateKeyPem"
}> {
  /** A one-line description naming the missing field. */
  override get message(): string {
    return "privateKeyPem is required for OAuth RSA-SHA256 operations"
  }
}

/** `awaitFinal` reached its deadline with the order still `processing`/`unknown`, or never reachable. */
export class AwaitFinalTimeout extends Data.TaggedError("AwaitFinalTimeout")<{
  /** The merchant's order id (`client_orderid`). */
  readonly client_orderid: string
  /** The gateway's order id (`orderid`), when known. */
  readonly orderid?: string | undefined
  /** The last `status` seen; `undefined` when `status` was never reached. */
  readonly lastStatus?: string | undefined
  /** Whether any `status` reply was ever received. */
  readonly statusReached: boolean
  /** The last failure of `status`, when there was one. */
  readonly lastError?: CallError | undefined
  /** How long `awaitFinal` waited, in milliseconds. */
  readonly waitedMs: number
  /**
   * Why the wait ended: `"deadline"` (`deadlineMs` passed, the order still processing or `status`
   * unreachable) or `"unknown-status"` (the gateway answered `unknown` for longer than
   * `unknownGraceMs`: it lost track of the order; ask its support, do not charge again). Spec D9u.
   */
  readonly reason: "deadline" | "unknown-status"
  /** With `reason: "unknown-status"`: how long `status` said `unknown` without a break, in milliseconds. */
  readonly unknownForMs?: number | undefined
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    if (this.reason === "unknown-status") {
      return `awaitFinal: ${this.client_orderid} status unknown for ${this.unknownForMs ?? 0} ms (the gateway lost track of the order; ask its support, do not charge again)`
    }
    const seen = this.statusReached ? `still ${this.lastStatus}` : `status never reached${this.lastError === undefined ? "" : ` (${this.lastError._tag})`}`
    return `awaitFinal: ${this.client_orderid} ${seen} after ${this.waitedMs} ms`
  }
}

/** A `status` reply as reconciliation saw it (the decoded reply; amounts as decimal strings). */
export type StatusSnapshot = Readonly<Record<string, unknown>> & {
  /** The order's status word. */
  readonly status: string
}

/** Errors a single gateway call can produce (before reconciliation). */
export type CallError =
  | InputError
  | GatewayValidationError
  | AuthenticationError
  | GatewayServerError
  | TransportError
  | Timeout
  | DecodeError

/** Errors of a read operation (`status`, `getCardInfo`, `panEligibilitySend`). */
export type ReadError = CallError | Cancelled

/** Errors of a money-moving operation: a refusal, or an outcome the client could not prove. */
export type ReconcileError =
  | InputError
  | GatewayValidationError
  | AuthenticationError
  | DecodeError
  | TransportError
  | GatewayServerError
  | Timeout
  | OutcomeUnknown
  | ReconcileConflict
  | Cancelled
  | StoreError
  | StoreInputError

/** Every error of this package. */
export type PayClientError = ReconcileError | CallbackSignatureError | AwaitFinalTimeout | MissingPrivateKey

const TAGS: ReadonlySet<string> = new Set([
  "InputError", "GatewayValidationError", "AuthenticationError", "GatewayServerError", "TransportError", "Timeout",
  "DecodeError", "CallbackSignatureError", "OutcomeUnknown", "ReconcileConflict", "Cancelled", "MissingPrivateKey",
  "AwaitFinalTimeout", "StoreError", "StoreInputError"
])

/** `true` for any error of this package (use it in a `catch` of the Promise facade). */
export function isPayClientError(u: unknown): u is PayClientError {
  return typeof u === "object" && u !== null && TAGS.has((u as { _tag?: unknown })._tag as string) && u instanceof Error
}

/**
 * `true` for a failure worth another try of a read: the network, a timeout, a transient HTTP
 * status (408, 429, 5xx). For a money-moving call these are exactly the failures whose outcome
 * is unknown, unless the request provably never left ({@link isOutcomeUnknown}).
 */
export function isTransient(error: { readonly _tag: string }): error is TransportError | Timeout | GatewayServerError {
  return error._tag === "TransportError" || error._tag === "Timeout" || error._tag === "GatewayServerError"
}

/**
 * `true` when a failed send may have been processed: a timeout, a transient HTTP status, a transport
 * failure after connecting, or a 2xx reply whose body could not be decoded.
 */
export function isOutcomeUnknown(error: { readonly _tag: string }): boolean {
  switch (error._tag) {
    case "Timeout":
    case "GatewayServerError":
      return true
    case "TransportError":
      return (error as TransportError).mayHaveReachedGateway
    case "DecodeError": {
      const status = (error as DecodeError).httpStatus
      return status >= 200 && status < 300
    }
    default:
      return false
  }
}

/** Returns a copy of a call error that carries `idempotencyKey` (errors are values; the original stays as it was). */
export function withIdempotencyKey<E extends { readonly _tag: string }>(error: E, idempotencyKey: string): E {
  if ((error as { idempotencyKey?: unknown }).idempotencyKey === idempotencyKey) return error
  const Ctor = (error as unknown as { constructor: new(args: unknown) => E }).constructor
  return new Ctor({ ...(error as object), idempotencyKey })
}
