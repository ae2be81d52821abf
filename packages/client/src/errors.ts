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
import { Data } from "effect"

/** The caller's input broke the contract Schema (or signing could not digest it); nothing was sent. */
export class InputError extends Data.TaggedError("InputError")<{
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

/** The gateway answered 400 with a validation or lifecycle `error-code` (e.g. `capture-not-allowed`). */
export class GatewayValidationError extends Data.TaggedError("GatewayValidationError")<{
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

/** The gateway answered 400 with an `error-code` of category `auth`: it rejected our signature or credentials. */
export class AuthenticationError extends Data.TaggedError("AuthenticationError")<{
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

/** The gateway answered 500. The request may or may not have been processed. */
export class GatewayServerError extends Data.TaggedError("GatewayServerError")<{
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

/** No reply within the per-attempt timeout. The request may have been processed. */
export class Timeout extends Data.TaggedError("Timeout")<{
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
 * A money-moving call's outcome is unknown and even `status` could not tell whether the gateway
 * has the order. Do NOT resend blindly: ask `status` (or `awaitFinal`) by `client_orderid` later.
 */
export class OutcomeUnknown extends Data.TaggedError("OutcomeUnknown")<{
  /** The client method of the call, e.g. `sale` or `status`. */
  readonly operation: string
  /** The merchant's order id (`client_orderid`). */
  readonly client_orderid: string
  /** The gateway's order id (`orderid`), when known. */
  readonly orderid?: string | undefined
  /** `_tag` of the failure that made the outcome unknown. */
  readonly lastError: string
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `${this.operation}: outcome unknown for client_orderid ${this.client_orderid} (${this.lastError}); query status before retrying`
  }
}

/** `awaitFinal` reached its deadline with the order still `processing`/`unknown`. */
export class AwaitFinalTimeout extends Data.TaggedError("AwaitFinalTimeout")<{
  /** The merchant's order id (`client_orderid`). */
  readonly client_orderid: string
  /** The gateway's order id (`orderid`), when known. */
  readonly orderid?: string | undefined
  /** The last `status` seen before the deadline. */
  readonly lastStatus: string
  /** How long `awaitFinal` waited, in milliseconds. */
  readonly waitedMs: number
}> {
  /** A one-line description naming the operation and the rule or code, never a secret or card value. */
  override get message(): string {
    return `awaitFinal: ${this.client_orderid} still ${this.lastStatus} after ${this.waitedMs} ms`
  }
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
export type ReadError = CallError

/** Errors of a money-moving operation: a call error, or an outcome nobody could establish. */
export type ReconcileError = CallError | OutcomeUnknown

/** Every error of this package. */
export type PayClientError = ReconcileError | CallbackSignatureError | AwaitFinalTimeout
