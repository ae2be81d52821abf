/**
 * The Effect steps of a money-moving call after its check: the intent under its idempotency key
 * (`beginMoney`, `afterBegin`), the order lock (`serialized`), the attempts with their proofs
 * (`execute`), and the end recorded in the ledger (`runIntent`, `interrupted`). A send whose
 * outcome is unknown is proven from the gateway's `status` before anything else happens; only a
 * proven "not applied" (or a failure before connecting) is sent again. Once any outcome was unknown
 * the call ends with a proof or `OutcomeUnknown`, never a bare transport error
 * (docs/decisions.md#18-unknown-outcomes).
 *
 * @packageDocumentation
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import { Cancelled, InputError, isOutcomeUnknown, OutcomeUnknown, withIdempotencyKey, type CallError, type ReconcileError, type StatusSnapshot } from "../errors"
import { awaitJoined, detachedResult, fingerprintOf, type Begin, type CallIntent, type IntentMeta } from "../intents/ledger"
import {
  interruptedUnknown,
  reconcileOnce,
  refusedAfterUnknown,
  settle,
  siblingUnknown,
  stillUnknown,
  statusQuery,
  takenOverUnknown,
  unknownOutcome,
  type ReconcileContext,
  type StatusLookup
} from "../intents/reconcile"
import type { PreparedOperation, StatusReply } from "../operations/table"
import { attemptEffect, newAttempts, recordLast, type AttemptFailure, type Attempts } from "./attempt"
import { boundOf, metaOf, windowOf } from "./check"
import type { CallContext } from "./context"
import { whenAborted } from "../transport/when-aborted"
import type { CallOptions } from "./options"
import { retryLazily, retrySchedule } from "./retry"

/** A first attempt that already happened (outside a fiber), handed over as its result. */
export type FirstAttempt = Effect.Effect<Record<string, unknown>, AttemptFailure>

/** Another instance holds the call's intent now (it took it over): this call sends nothing more. */
function heldElsewhere(op: PreparedOperation, values: Readonly<Record<string, string>>, intent: CallIntent): OutcomeUnknown {
  const clientOrderId = op.clientOrderIdField === undefined ? "" : (values[op.clientOrderIdField] ?? "")
  return new OutcomeUnknown({
    operation: op.method, client_orderid: clientOrderId, orderid: values["orderid"], lastError: "HeldElsewhere",
    mayHaveApplied: true, statusBefore: intent.before, statusAfter: undefined, idempotencyKey: intent.key,
    next: "another instance holds this idempotencyKey now and proves or sends it: call again with the same key later (it replays that outcome)"
  })
}

/** Whether a call's failure is itself a verdict on its key's earlier sends (proven not applied, or a conflict). */
const proves = (e: { readonly _tag: string }): boolean => e._tag === "OutcomeUnknown" || e._tag === "ReconcileConflict"

/** A failure after which resending is provably safe. */
const isResendable = (e: { readonly _tag: string }): boolean =>
  e._tag === "NotApplied" || (e._tag === "TransportError" && !(e as unknown as { mayHaveReachedGateway: boolean }).mayHaveReachedGateway)

/** Failures that are answers in themselves, whatever happened before. */
const FINAL_ANSWERS: ReadonlySet<string> = new Set([
  "OutcomeUnknown", "ReconcileConflict", "GatewayValidationError", "AuthenticationError", "InputError"
])

/** The call's attempts, their deadline counted from the fiber's clock. */
export function attemptsFor(ctx: CallContext, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean, key?: string, deadlineAt?: number): Effect.Effect<Attempts> {
  return Effect.map(Clock.currentTimeMillis, (now) => newAttempts(ctx, op, values, endpointId, options, traced, now, key, deadlineAt))
}

/** The retry schedule of a call: the client's, or the call's own override (built only when a retry is due). */
export function scheduleOf(ctx: CallContext, options: CallOptions): () => Schedule.Schedule<unknown, unknown> {
  return () => (options.retry === undefined ? ctx.schedule : retrySchedule({ ...ctx.config.retry, ...options.retry }))
}

// `retries` beside `attempt`: what a trace reader filters on (0 for a first-attempt answer). The
// OpenTelemetry HTTP client attributes of the last attempt beside them (docs/decisions.md#23-request-hooks).
const annotate = (ctx: CallContext, a: Attempts, outcome: string) => {
  const attributes: Record<string, unknown> = { attempt: a.count, retries: Math.max(0, a.count - 1), outcome, "paykit.attempts": a.count, "paykit.outcome": outcome }
  if (a.lastPath !== undefined && ctx.server !== undefined) attributes["url.full"] = ctx.server.origin + a.lastPath.replace("{endpointId}", a.endpointId)
  if (a.lastStatus !== undefined) attributes["http.response.status_code"] = a.lastStatus
  if (a.lastSerialNumber !== undefined) attributes["paykit.serial_number"] = a.lastSerialNumber
  return Effect.annotateCurrentSpan(attributes)
}

/**
 * Ends a call's steps: records its last response beside its result (`lastResponseOf`), and
 * annotates a traced call's span with its attempts and outcome.
 */
export function finishSpan<A, E extends { readonly _tag: string }>(ctx: CallContext, a: Attempts, effect: Effect.Effect<A, E>): Effect.Effect<A, E> {
  const recorded = Effect.map(effect, (r) => recordLast(a, r))
  return !a.traced ? recorded : recorded.pipe(
    Effect.tap((r) => annotate(ctx, a, (r as { type?: unknown }).type === "reconciled" ? "reconciled" : "ok")),
    Effect.tapError((e) => annotate(ctx, a, e._tag))
  )
}

/** Logs a retry that is due. */
export function logRetry(a: Attempts, error: { readonly _tag: string }): Effect.Effect<void> {
  return Effect.logDebug("paykit: retrying").pipe(Effect.annotateLogs({ operation: a.op.id, attempt: a.count, error: error._tag }))
}

/** Whether the call still has time and was not aborted (a retry is due only then). */
export function stillTime(a: Attempts): Effect.Effect<boolean> {
  return Effect.map(Clock.currentTimeMillis, (now) => now < a.deadlineAt && a.options.signal?.aborted !== true)
}

/** `status` for reconciliation: the call's endpoint and timeouts; `once` without read retries. */
function lookupFor(ctx: CallContext, a: Attempts, once: boolean): StatusLookup {
  return (query) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      ctx.status(query, {
        endpoint: a.options.endpoint,
        groupPathForm: a.options.groupPathForm,
        timeoutMs: a.timeoutMs,
        // The call's deadline bounds its lookups too (a passed one: Cancelled, nothing proven).
        deadlineMs: Math.max(0, a.deadlineAt - now),
        retry: once ? { maxRetries: 0 } : a.options.retry
      })) as Effect.Effect<StatusReply, CallError>
}

/** A money call from its check: its intent begun under its key, then run to its end. */
export function moneyCall(ctx: CallContext, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean): Effect.Effect<unknown, ReconcileError> {
  const meta = metaOf(op, values, endpointId)
  return Effect.flatMap(ctx.ledger.begin(options.idempotencyKey, fingerprintOf(op.id, endpointId, values, op.fieldNames), meta, boundOf(ctx.config, options)), (begun) =>
    afterBegin(ctx, begun, op, values, endpointId, options, traced, meta))
}

/** A money call from what `begin` found under its key. */
export function afterBegin(
  ctx: CallContext,
  begun: Begin,
  op: PreparedOperation,
  values: Readonly<Record<string, string>>,
  endpointId: string,
  options: CallOptions,
  traced: boolean,
  meta?: IntentMeta
): Effect.Effect<unknown, ReconcileError> {
  switch (begun._tag) {
    case "KeyReused":
      return Effect.fail(new InputError({ operation: op.method, field: "idempotencyKey", rule: "already used for a different request", idempotencyKey: options.idempotencyKey }))
    case "Replay":
      return Exit.map(begun.exit, detachedResult)
    case "Join":
      return awaitJoined(begun.intent, meta ?? metaOf(op, values, endpointId), boundOf(ctx.config, options))
  }
  const intent = begun.intent
  const resume = begun._tag === "Resume"
  // The deadline runs from when the call began: a wait for its key in the store counts against it.
  return Effect.flatMap(attemptsFor(ctx, op, values, endpointId, options, traced, intent.key, intent.deadlineAt), (a) => runIntent(ctx, a, intent, resume))
}

/** Runs a money call's intent to its end and records it; `first`, when given, is a first attempt that already happened. */
export function runIntent(ctx: CallContext, a: Attempts, intent: CallIntent, resume: boolean, first?: FirstAttempt): Effect.Effect<unknown, ReconcileError> {
  return Effect.exit(serialized(ctx, a, intent, execute(ctx, a, intent, resume, first))).pipe(
    Effect.onInterrupt(() => interrupted(ctx, a, intent)),
    Effect.flatMap((exit) => {
      const keyed: Exit.Exit<unknown, ReconcileError> = Exit.mapBoth(exit, {
        onFailure: (e) => withIdempotencyKey(e, intent.key),
        onSuccess: (r) => ((r as { type?: unknown }).type === "reconciled" ? r : { ...(r as object), idempotencyKey: intent.key })
      })
      const failure = Exit.isFailure(keyed) ? Option.getOrUndefined(Cause.failureOption(keyed.cause)) : undefined
      // A key with an unproven earlier send stays unknown whatever ended this call, unless this call
      // proved something (not applied, a conflict): "nothing sent" by this call says nothing of that send.
      if (failure !== undefined && intent.unknownSince !== undefined && !proves(failure)) {
        const still = Exit.fail(withIdempotencyKey(stillUnknown(a.op, a.values, intent, failure._tag), intent.key))
        return Effect.zipRight(ctx.ledger.finish(intent, still, true), finishSpan(ctx, a, still))
      }
      const unknown = failure?._tag === "OutcomeUnknown" && failure.mayHaveApplied
      return Effect.zipRight(ctx.ledger.finish(intent, keyed, unknown), finishSpan(ctx, a, keyed))
    })
  )
}

// A call on an existing order holds its order from its snapshot to its proof, and notes the
// order's sends when it ends (see intents/order-locks.ts).
function serialized(ctx: CallContext, a: Attempts, intent: CallIntent, run: Effect.Effect<unknown, ReconcileError>): Effect.Effect<unknown, ReconcileError> {
  const orderid = a.op.onExistingOrder ? a.values["orderid"] : undefined
  if (orderid === undefined) return run
  return ctx.orders.withOrder(orderid, { operation: a.op.method, idempotencyKey: intent.key, deadlineAt: a.deadlineAt, signal: a.options.signal }, intent, () => a.count > 0, run)
}

/**
 * The caller's fiber was interrupted (e.g. an Effect.timeout around the call): no silent abort. The
 * intent stays "unknown" under its key, so the next call with it (or an identical keyless call)
 * reconciles before sending anything.
 */
export function interrupted(ctx: CallContext, a: Attempts, intent: CallIntent): Effect.Effect<void> {
  return Effect.gen(function*() {
    a.inFlight?.abort?.()
    const now = yield* Clock.currentTimeMillis
    // Sent by this call, or by an earlier one under its key whose outcome is still unproven.
    const sent = a.count > 0 || intent.unknownSince !== undefined
    if (a.count > 0) {
      intent.unknownSince = now
      intent.lastError = "Interrupted"
    }
    const error = sent
      ? interruptedUnknown(a.op, a.values, intent)
      : new Cancelled({ operation: a.op.method, reason: "interrupted", idempotencyKey: intent.key })
    yield* Effect.logWarning("paykit: call interrupted").pipe(Effect.annotateLogs({ operation: a.op.id, sent, idempotency_key: intent.key }))
    yield* ctx.ledger.finish(intent, Exit.fail(error), sent)
  })
}

/** A money call's attempts, each unknown outcome proven, and the snapshot of the order first when it has one. */
function execute(ctx: CallContext, a: Attempts, intent: CallIntent, resume: boolean, first?: FirstAttempt): Effect.Effect<unknown, ReconcileError> {
  const { op, values } = a
  // A resumed key keeps the start of its earliest send; a first call's sends start no earlier than it.
  intent.firstSendAt ??= a.startedAt
  const query = statusQuery(op, values)
  if (resume && intent.beforeLost === true && op.onExistingOrder) {
    // Another instance sent this call and stopped before its outcome was known; the order as it
    // was before that send is not known here, so nothing can prove the call did not land.
    return Effect.fail(takenOverUnknown(op, values, intent.key))
  }
  // Reconciliation is rare: its context (and its lookups) is built the first time a proof is needed,
  // after the order was read (its `before` is final by then).
  let proof: ReconcileContext | undefined
  const context = (): ReconcileContext => {
    if (proof !== undefined) return proof
    const reconcile = { ...ctx.config.reconcile, ...a.options.reconcile }
    proof = {
      op, values, key: intent.key, before: intent.before,
      lookup: lookupFor(ctx, a, false), lookupOnce: lookupFor(ctx, a, true),
      settleMs: windowOf(ctx.config, a.options), pollIntervalMs: reconcile.pollIntervalMs,
      deadlineAt: a.deadlineAt, aborted: () => a.options.signal?.aborted === true,
      sentAt: () => intent.firstSendAt ?? intent.unknownSince, notFoundProvesWithinMs: reconcile.notFoundProvesWithinMs
    }
    return proof
  }
  // The processing window starts when the key's last fetch returned (see keyed-fetches.ts), not when we stopped waiting.
  const settleAfterSend = (cause: string, since: number) =>
    Effect.flatMap(ctx.fetches.ended(a.key, a.options.signal, a.deadlineAt, since), (from) => settle(context(), cause, from))
  // Another call's send on this order out since the snapshot may land inside the window: then the
  // figures cannot tell its money from this call's (this call stays unknown, and so does a resume).
  const orderid = values["orderid"]
  const mixed = () => {
    if (orderid !== undefined && ctx.fetches.outOnOrder(orderid, intent.key)) intent.beforeMixed = true
    return intent.beforeMixed === true
  }
  const prove = (cause: string, since: number) =>
    !op.onExistingOrder
      ? reconcileOnce(context(), cause)
      : Effect.suspend(() => (mixed() ? Effect.fail(siblingUnknown(op, values, intent, "in-flight")) : settleAfterSend(cause, since)))
  // An attempt whose outcome is unknown is proven before anything else happens.
  const proven = (sent: FirstAttempt) =>
    Effect.catchIf(sent, isOutcomeUnknown, (e) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        intent.unknownSince = now
        intent.lastError = e._tag
        return prove(e._tag, now)
      }))
  // Every send but the first of a freshly recorded intent first re-checks that this call still
  // holds its intent, and moves the time its sends end by (docs/fleet.md#the-intent-protocol).
  const fenced = Effect.suspend(() =>
    a.count === 0 && intent.sendsRecorded === true
      ? Effect.void
      : Effect.flatMap(ctx.ledger.beforeResend(intent), (held) => (held ? Effect.void : Effect.fail(heldElsewhere(op, values, intent)))))
  const attempt = Effect.zipRight(fenced, proven(attemptEffect(ctx, a)))
  const send = retryLazily(attempt, scheduleOf(ctx, a.options), (e) => isResendable(e) ? Effect.zipRight(logRetry(a, e), stillTime(a)) : false, first === undefined ? attempt : proven(first)).pipe(
    Effect.catchAll((e): Effect.Effect<unknown, ReconcileError> => {
      if (intent.unknownSince === undefined) return Effect.fail(e as ReconcileError)
      if (e._tag === "NotApplied" && e.settled) return Effect.fail(unknownOutcome(context(), e.cause, e.statusAfter, false))
      if (e._tag === "GatewayValidationError" || e._tag === "AuthenticationError") return Effect.fail(refusedAfterUnknown(context(), intent.lastError ?? "unknown", e))
      if (FINAL_ANSWERS.has(e._tag)) return Effect.fail(e as ReconcileError)
      // Retries or time ran out after an unknown outcome: prove what the gateway holds, or say so.
      return settleAfterSend(intent.lastError ?? e._tag, intent.unknownSince).pipe(
        Effect.catchTag("NotApplied", (n) => Effect.fail(unknownOutcome(context(), n.cause, n.statusAfter, false)))
      )
    })
  )
  // A resumed call whose last send had an unknown outcome proves it first; it sends only once
  // nothing was applied.
  const proveThenSend = Effect.suspend((): Effect.Effect<unknown, ReconcileError> => {
    if (!resume || intent.unknownSince === undefined) return send
    if (op.onExistingOrder && orderid !== undefined && ctx.orders.movedSince(orderid, intent)) {
      return Effect.fail(siblingUnknown(op, values, intent, "sent-after"))
    }
    return Effect.flatMap(Effect.either(prove(intent.lastError ?? "unknown", intent.unknownSince)), (proof) =>
      Either.isRight(proof) ? Effect.succeed(proof.right) : proof.left._tag !== "NotApplied" ? Effect.fail(proof.left) : send)
  })
  if (op.onExistingOrder && intent.before === undefined && query !== undefined) {
    // Nothing is sent yet: a failure to read the order is the answer (no outcome is unknown), and
    // the caller's signal ends the read at once (Cancelled: nothing was sent).
    // A sibling's send out before or after the read may land inside this call's window.
    // A deadline used up before the read (waiting on the store for the intent or the order's lease)
    // ends the call Cancelled: nothing was sent.
    const read = Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<StatusReply, CallError | Cancelled> => {
      if (now >= a.deadlineAt) return Effect.fail(new Cancelled({ operation: op.method, reason: "deadline", idempotencyKey: intent.key }))
      mixed()
      return lookupFor(ctx, a, false)(query)
    })
    const signal = a.options.signal
    const bounded = signal === undefined ? read : Effect.raceFirst(read, whenAborted(signal, () => new Cancelled({ operation: op.method, reason: "signal", idempotencyKey: intent.key })))
    return Effect.flatMap(bounded, (before) => {
      intent.before = before as unknown as StatusSnapshot
      mixed()
      // Durable before the send (a shared store keeps it), so recover() elsewhere can prove the outcome.
      return Effect.zipRight(ctx.ledger.recordBefore(intent), proveThenSend)
    })
  }
  return resume ? proveThenSend : send
}
