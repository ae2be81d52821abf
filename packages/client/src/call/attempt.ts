/**
 * The one attempt of every call: start → sign → send → classify. Reads and money-moving calls,
 * the Effect API and the Promise facade, with or without a store, all send through
 * {@link runAttempt}; {@link attemptEffect} is the same attempt as one Effect step. An attempt is
 * signed afresh each time (an OAuth nonce may not be reused, and the control is cheap) and counted
 * before it is sent, so whoever continues the call knows that bytes may have left.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Cancelled, type CallError } from "../errors"
import type { PreparedOperation } from "../operations/table"
import { isReply, type InFlight, type SendResult, type TransportRequest } from "../transport/fetch"
import { groupPathOf, signingFailure } from "./check"
import { classifyReply } from "./classify"
import type { CallContext } from "./context"
import { callHook, serialNumberOfBody, setLastResponse, type PayRequestView } from "./hooks"
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
  /** When these attempts began (the caller's clock): no send of theirs started earlier. */
  readonly startedAt: number
  /** When the call ends (the caller's clock): its deadline from when it began, a wait for its key included. */
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
  /** The path template the last attempt was sent to (`{endpointId}` not yet in place), for the span's `url.full`. */
  lastPath: string | undefined
  /** The last attempt's HTTP status, `undefined` until a reply came (or when the last got none). */
  lastStatus: number | undefined
  /** The last reply's `serial-number`, when it had one. */
  lastSerialNumber: string | undefined
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
  key: string | undefined,
  deadlineAt?: number
): Attempts {
  return {
    op, values, endpointId, options,
    timeoutMs: options.timeoutMs ?? ctx.config.timeoutMs,
    startedAt: now,
    deadlineAt: Math.min(now + (options.deadlineMs ?? ctx.config.deadlineMs), deadlineAt ?? Number.POSITIVE_INFINITY),
    traced,
    key,
    count: 0,
    inFlight: op.retry === "reconcile" ? { abort: undefined } : undefined,
    lastPath: undefined,
    lastStatus: undefined,
    lastSerialNumber: undefined
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
  a.lastPath = path
  let signed
  try {
    signed = signRequest(op.auth, values, ctx.keys, { endpointId, baseUrl: config.baseUrl, path, login: values["login"] ?? config.login, minorUnits: config.minorUnits })
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

/** The clock an attempt's hooks time it by: the caller's Effect `Clock` (its reading is all it takes). */
export interface AttemptClock {
  readonly unsafeCurrentTimeMillis: () => number
}

/**
 * Runs one attempt: starts and signs it, sends it, and classifies the reply. `onEnd` is called
 * once with the typed reply or the failure, unless the returned interruption (it aborts the fetch)
 * is called first. The client's hooks see the attempt as it is sent and as it ends (`hooks.ts`),
 * its duration read from `clock` (the caller's clock: the fiber's, or `Date.now` for a Promise call
 * when none is given).
 */
export function runAttempt(ctx: CallContext, a: Attempts, now: number, onEnd: (outcome: AttemptOutcome) => void, clock?: AttemptClock): () => void {
  const request = startAttempt(ctx, a, now)
  if ("_tag" in request) {
    onEnd(Either.left(request))
    return noop
  }
  const op = a.op
  const { onRequest, onResponse } = ctx.config
  if (onRequest === undefined && onResponse === undefined) {
    return ctx.send(request, (result) => onEnd(ended(a, op, result)))
  }
  const view = requestView(a, request)
  if (onRequest !== undefined) callHook("onRequest", onRequest, view)
  return ctx.send(request, (result) => {
    const outcome = ended(a, op, result)
    if (onResponse !== undefined) {
      callHook("onResponse", onResponse, {
        ...view,
        status: a.lastStatus,
        durationMs: Math.max(0, (clock === undefined ? Date.now() : clock.unsafeCurrentTimeMillis()) - now),
        serialNumber: a.lastSerialNumber,
        error: Either.isLeft(outcome) ? outcome.left._tag : undefined
      })
    }
    onEnd(outcome)
  })
}

/** Classifies how a send ended, keeping its status and `serial-number` on the call's attempts. */
function ended(a: Attempts, op: PreparedOperation, result: SendResult): AttemptOutcome {
  if (!isReply(result)) {
    a.lastStatus = undefined
    a.lastSerialNumber = undefined
    return Either.left(result)
  }
  a.lastStatus = result.status
  a.lastSerialNumber = serialNumberOfBody(result.body)
  return classifyReply(op, result)
}

/**
 * Records how a call's result was reached beside it (`lastResponseOf`): its attempts, its last
 * reply's status and `serial-number` (none for a reconciled result: its own reply was lost). Returns
 * the result.
 */
export function recordLast<A>(a: Attempts, result: A): A {
  const reconciled = (result as { type?: unknown } | null)?.type === "reconciled"
  setLastResponse(result, { attempts: a.count, serialNumber: reconciled ? undefined : a.lastSerialNumber, httpStatus: a.lastStatus })
  return result
}

/** The redacted view of an attempt a hook sees (docs/decisions.md#23-request-hooks). */
function requestView(a: Attempts, request: TransportRequest): PayRequestView {
  const field = a.op.clientOrderIdField
  return {
    operation: a.op.id,
    path: request.path.replace("{endpointId}", request.endpointId),
    client_orderid: field === undefined ? "" : (a.values[field] ?? ""),
    attempt: a.count
  }
}

/**
 * {@link runAttempt} as one Effect step, on the fiber's clock. Interruption aborts the fetch: a
 * read's here, a money call's through its call's own handler (`Attempts.inFlight`).
 */
export function attemptEffect(ctx: CallContext, a: Attempts): Effect.Effect<Record<string, unknown>, AttemptFailure> {
  return Effect.clockWith((clock) =>
    Effect.async<Record<string, unknown>, AttemptFailure>((resume) => {
      const now = clock.unsafeCurrentTimeMillis()
      const interrupt = runAttempt(ctx, a, now, (outcome) => resume(Either.isRight(outcome) ? Effect.succeed(outcome.right) : Effect.fail(outcome.left)), clock)
      if (a.inFlight === undefined) return Effect.sync(interrupt)
    }))
}
