/**
 * The one attempt of every call: start → sign → send → classify. Reads and money-moving calls,
 * the Effect API and the Promise facade, with or without a store, all send through
 * {@link runAttempt}; {@link attemptEffect} is the same attempt as one Effect step. An attempt is
 * signed afresh each time (an OAuth nonce may not be reused, and the control is cheap) and counted
 * before it is sent, so whoever continues the call knows that bytes may have left.
 *
 * @packageDocumentation
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Cancelled, type CallError } from "../errors"
import type { PreparedOperation } from "../operations/table"
import { isReply, type InFlight, type TransportRequest } from "../transport/fetch"
import { groupPathOf, signingFailure } from "./check"
import { classifyReply } from "./classify"
import type { CallContext } from "./context"
import type { CallOptions } from "./options"
import { signRequest } from "./sign"

/** How an attempt failed: a typed error of the reply or the send, or `Cancelled` before sending. */
export type AttemptFailure = CallError | Cancelled

/** How an attempt ended: the decoded reply, or why there is none. */
export type AttemptOutcome = Either.Either<Record<string, unknown>, AttemptFailure>

/** Everything one call's attempts share. */
export interface Attempts {
  readonly op: PreparedOperation
  readonly values: Readonly<Record<string, string>>
  readonly endpointId: string
  readonly options: CallOptions
  readonly timeoutMs: number
  readonly deadlineAt: number
  /** The money call's idempotency key (its fetches are tracked under it); `undefined` for reads. */
  readonly key: string | undefined
  /** Whether the call has its own span to annotate. */
  readonly traced: boolean
  /** Attempts started so far (counted before each send). */
  count: number
  /**
   * Money-moving calls: the fetch in flight, aborted by the call's own interruption handler (one
   * handler per call instead of one per send). Reads leave it `undefined` and the attempt aborts
   * on interruption itself.
   */
  readonly inFlight: InFlight | undefined
}

/** A call's attempt state, its deadline counted from `now`. */
export function newAttempts(
  ctx: CallContext,
  op: PreparedOperation,
  values: Readonly<Record<string, string>>,
  endpointId: string,
  options: CallOptions,
  traced: boolean,
  now: number,
  key: string | undefined
): Attempts {
  return {
    op, values, endpointId, options,
    timeoutMs: options.timeoutMs ?? ctx.config.timeoutMs,
    deadlineAt: now + (options.deadlineMs ?? ctx.config.deadlineMs),
    traced,
    key,
    count: 0,
    inFlight: op.retry === "reconcile" ? { abort: undefined } : undefined
  }
}

/**
 * Starts and signs one attempt: the request to send, or the failure that ends the attempt before
 * anything is sent (the caller's signal, the call's deadline, a value that cannot be signed).
 */
export function startAttempt(ctx: CallContext, a: Attempts, now: number): TransportRequest | AttemptFailure {
  const { op, values, endpointId, options } = a
  if (options.signal?.aborted === true) return new Cancelled({ operation: op.method, reason: "signal" })
  const left = a.deadlineAt - now
  if (left <= 0) return new Cancelled({ operation: op.method, reason: "deadline" })
  a.count++
  const config = ctx.config
  const path = groupPathOf(config, options) ? op.groupPath : op.path
  let signed
  try {
    signed = signRequest(op.id, op.auth, values, ctx.keys, { endpointId, baseUrl: config.baseUrl, path, login: values["login"] ?? config.login, minorUnits: config.minorUnits })
  } catch (error) {
    return signingFailure(op.method, error)
  }
  const key = a.key
  const fetches = ctx.fetches
  return {
    operation: op.method,
    path,
    endpointId,
    body: values,
    control: signed.kind === "control" ? signed.control : undefined,
    authorization: signed.kind === "header" ? signed.authorization : undefined,
    timeoutMs: Math.max(1, Math.min(a.timeoutMs, left)),
    signal: options.signal,
    onFetch: key === undefined ? undefined : () => fetches.start(key, op.onExistingOrder ? values["orderid"] : undefined),
    inFlight: a.inFlight
  }
}

const noop = (): void => {}

/**
 * Runs one attempt: starts and signs it, sends it, and classifies the reply. `onEnd` is called
 * once with the typed reply or the failure, unless the returned interruption (it aborts the fetch)
 * is called first.
 */
export function runAttempt(ctx: CallContext, a: Attempts, now: number, onEnd: (outcome: AttemptOutcome) => void): () => void {
  const request = startAttempt(ctx, a, now)
  if ("_tag" in request) {
    onEnd(Either.left(request))
    return noop
  }
  const op = a.op
  return ctx.send(request, (result) => onEnd(isReply(result) ? classifyReply(op, result) : Either.left(result)))
}

/**
 * {@link runAttempt} as one Effect step, on the fiber's clock. Interruption aborts the fetch: a
 * read's here, a money call's through its call's own handler (`Attempts.inFlight`).
 */
export function attemptEffect(ctx: CallContext, a: Attempts): Effect.Effect<Record<string, unknown>, AttemptFailure> {
  return Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.async<Record<string, unknown>, AttemptFailure>((resume) => {
      const interrupt = runAttempt(ctx, a, now, (outcome) => resume(Either.isRight(outcome) ? Effect.succeed(outcome.right) : Effect.fail(outcome.left)))
      if (a.inFlight === undefined) return Effect.sync(interrupt)
    }))
}
