/**
 * The request pipeline shared by every operation: decode input → sign → send → classify reply,
 * inside one span per call.
 *
 * - Reads retry transient failures (`isTransient`) with `Effect.retry` on an exponential, jittered
 *   `Schedule`.
 * - Money-moving calls run under an idempotency key (`intents`): the same key replays or joins;
 *   calls on an existing order snapshot the order first. A send whose outcome is unknown
 *   (`isOutcomeUnknown`) is reconciled by one `catchIf`; only a proven "not applied" (or a failure
 *   before connecting) is resent by the same `Effect.retry`. Once any outcome was unknown the call
 *   ends with a proof or `OutcomeUnknown`, never a bare transport error.
 * - `deadlineMs` bounds the whole call; `signal` aborts it. After bytes have left, either ends in
 *   reconciliation (one look at `status`) or `OutcomeUnknown`.
 * - With no tracer installed, the first attempt runs without a fiber (`first-attempt.ts`) and hands
 *   any outcome but the reply to these same steps, as the attempt that happened.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import { Cause, Clock, Context, Effect, Either, Exit, Option, type Schedule, Tracer } from "effect"
import { NO_OPTIONS, makeCallCheck, signingFailure } from "./call-check"
import { whenAborted } from "./call-options"
import { classifyReply } from "./classify"
import { makeKeyedFetches } from "./keyed-fetches"
import type { Attempts, CallOptions } from "./attempts"
import type { PayClientConfig } from "./config"
import { makeFirstAttempt, type AttemptFailure, type FirstAttemptDeps } from "./first-attempt"
import {
  Cancelled,
  InputError,
  isOutcomeUnknown,
  isTransient,
  withIdempotencyKey,
  type CallError,
  type ReconcileError,
  type StatusSnapshot
} from "./errors"
import { awaitJoined, detachedResult, fingerprintOf, memoryIntentLedger, type Begin, type CallIntent, type IntentLedger, type IntentMeta } from "./intents"
import type { PreparedOperation, StatusReply } from "./operations"
import { makeOrderLocks } from "./order-locks"
import { reconcileOnce, refusedAfterUnknown, interruptedUnknown, settle, siblingUnknown, statusQuery, takenOverUnknown, unknownOutcome, type ReconcileContext, type StatusLookup } from "./reconcile"
import { retryLazily, retrySchedule } from "./retry"
import { signRequest, type SigningKeys } from "./sign"
import { runToPromise } from "./run"
import { withStoreFirstAttempt } from "./store-first-attempt"
import type { Transports, TransportRequest } from "./transport"

export type { CallOptions } from "./attempts"

/** Runs operations. */
export interface Pipeline {
  readonly call: (operation: OperationId, input: unknown, options?: CallOptions) => Effect.Effect<unknown, ReconcileError>
  /** The same call for a Promise caller: no fiber unless the first attempt did not end in the reply. */
  readonly callPromise: (operation: OperationId, input: unknown, options?: CallOptions) => Promise<unknown>
  /** `status` with the client's defaults (for `awaitFinal` and callbacks). */
  readonly status: StatusLookup
}

export { retrySchedule } from "./retry"

/**
 * The tracer Effect runs with when the application installed none. Its spans reach no exporter, so
 * under it a call opens no span at all (and annotates none): a span cost more than the rest of the
 * call's Effect plumbing. With any other tracer (OpenTelemetry, a test's) every call has its span.
 */
const nativeTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** A failure after which resending is provably safe. */
const isResendable = (e: { readonly _tag: string }): boolean =>
  e._tag === "NotApplied" || (e._tag === "TransportError" && !(e as unknown as { mayHaveReachedGateway: boolean }).mayHaveReachedGateway)

/** Failures that are answers in themselves, whatever happened before. */
const FINAL_ANSWERS: ReadonlySet<string> = new Set([
  "OutcomeUnknown", "ReconcileConflict", "GatewayValidationError", "AuthenticationError", "InputError"
])

/** Builds the pipeline for one client. */
export function makePipeline(config: PayClientConfig, keys: SigningKeys, transports: Transports, ledger: IntentLedger = memoryIntentLedger()): Pipeline {
  const { transport, send: sender } = transports
  const { check, groupPathOf, metaOf, boundOf } = makeCallCheck(config, keys)

  const call = (operation: OperationId, input: unknown, options: CallOptions = NO_OPTIONS): Effect.Effect<unknown, ReconcileError> => {
    const checked = check(operation, input, options)
    if (checked.failure !== undefined) return checked.failure
    const { op, values, endpointId } = checked
    const money = op.retry === "reconcile"
    // One look at the fiber's services for both the tracer and the clock.
    return Effect.withFiberRuntime((fiber) => {
      const services = fiber.currentDefaultServices
      if (Context.get(services, Tracer.Tracer) === nativeTracer) {
        return fast.effect(op, values, endpointId, options, Context.get(services, Clock.Clock)) ??
          (money ? moneyCall(op, values, endpointId, options, false) : readCall(op, values, endpointId, options, false))
      }
      const run = money ? moneyCall(op, values, endpointId, options, true) : readCall(op, values, endpointId, options, true)
      const clientOrderId = op.clientOrderIdField === undefined ? "" : (values[op.clientOrderIdField] ?? "")
      return run.pipe(
        Effect.withSpan(op.spanName, {
          attributes: { operation: op.id, endpoint: endpointId, client_orderid: clientOrderId },
          kind: "client",
          // A stack trace per span costs more than the rest of the span; the operation name suffices.
          captureStackTrace: false
        })
      )
    })
  }

  // The Promise facade runs on Effect's default runtime, whose tracer is the native one: no span.
  const callPromise = (operation: OperationId, input: unknown, options: CallOptions = NO_OPTIONS): Promise<unknown> => {
    try {
      const checked = check(operation, input, options)
      if (checked.failure !== undefined) return runToPromise(checked.failure)
      const { op, values, endpointId } = checked
      return fast.promise(op, values, endpointId, options) ??
        runToPromise(op.retry === "reconcile" ? moneyCall(op, values, endpointId, options, false) : readCall(op, values, endpointId, options, false))
    } catch (defect) {
      // A bug, not a typed failure: still a rejection (as the runtime made it), never a throw.
      return Promise.reject(defect)
    }
  }

  // Each money call's fetches, by idempotency key, until each fetch itself returns.
  const fetches = makeKeyedFetches()

  /**
   * Counts and signs one attempt (signed per attempt: an OAuth nonce may not be reused, and the
   * control is cheap): the request to send, or the failure that ends the attempt before sending.
   */
  const startAttempt = (a: Attempts, now: number): TransportRequest | AttemptFailure => {
    const { op, values, endpointId, options } = a
    if (options.signal?.aborted === true) return new Cancelled({ operation: op.method, reason: "signal" })
    const left = a.deadlineAt - now
    if (left <= 0) return new Cancelled({ operation: op.method, reason: "deadline" })
    a.count++
    const path = groupPathOf(options) ? op.groupPath : op.path
    let signed
    try {
      signed = signRequest(op.id, op.auth, values, keys, { endpointId, baseUrl: config.baseUrl, path, login: values["login"] ?? config.login, minorUnits: config.minorUnits })
    } catch (error) {
      return signingFailure(op.method, error)
    }
    const key = a.key
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

  const sendOnce = (a: Attempts): Effect.Effect<Record<string, unknown>, AttemptFailure> =>
    Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Record<string, unknown>, AttemptFailure> => {
      const request = startAttempt(a, now)
      if ("_tag" in request) return Effect.fail(request)
      return transport(request).pipe(Effect.flatMap((reply) => {
        const result = classifyReply(a.op, reply)
        return Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left)
      }))
    })

  const makeAttempts = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean, now: number, key: string | undefined): Attempts => ({
    op, values, endpointId, options,
    timeoutMs: options.timeoutMs ?? config.timeoutMs,
    deadlineAt: now + (options.deadlineMs ?? config.deadlineMs),
    traced,
    key,
    count: 0,
    inFlight: op.retry === "reconcile" ? { abort: undefined } : undefined
  })

  const attemptsFor = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean, key?: string) =>
    Effect.map(Clock.currentTimeMillis, (now): Attempts => makeAttempts(op, values, endpointId, options, traced, now, key))

  // The processing window starts when the key's last fetch returned (see keyed-fetches.ts).
  const sendEnded = (a: Attempts, since: number): Effect.Effect<number> =>
    fetches.ended(a.key, a.options.signal, a.deadlineAt, since)

  // Built once per client; a per-call override builds its own, and only when a retry is due.
  const defaultSchedule = retrySchedule(config.retry)
  const scheduleOf = (options: CallOptions) => (): Schedule.Schedule<unknown, unknown> =>
    options.retry === undefined ? defaultSchedule : retrySchedule({ ...config.retry, ...options.retry })

  // `retries` beside `attempt`: what a trace reader filters on (0 for a first-attempt answer).
  const annotate = (a: Attempts, outcome: string) => Effect.annotateCurrentSpan({ attempt: a.count, retries: Math.max(0, a.count - 1), outcome })

  const finishSpan = <A, E extends { readonly _tag: string }>(a: Attempts, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    !a.traced ? effect : effect.pipe(
      Effect.tap((r) => annotate(a, (r as { type?: unknown }).type === "reconciled" ? "reconciled" : "ok")),
      Effect.tapError((e) => annotate(a, e._tag))
    )

  const logRetry = (op: PreparedOperation, a: Attempts, error: { readonly _tag: string }) =>
    Effect.logDebug("paykit: retrying").pipe(Effect.annotateLogs({ operation: op.id, attempt: a.count, error: error._tag }))

  const stillTime = (a: Attempts) => Effect.map(Clock.currentTimeMillis, (now) => now < a.deadlineAt && a.options.signal?.aborted !== true)

  /** A read's attempts; `first`, when given, is a first attempt that already happened. */
  const readAttempts = (a: Attempts, first?: Effect.Effect<Record<string, unknown>, AttemptFailure>) =>
    finishSpan(a, retryLazily(sendOnce(a), scheduleOf(a.options), (e) => isTransient(e) ? Effect.zipRight(logRetry(a.op, a, e), stillTime(a)) : false, first))

  const readCall = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean) =>
    Effect.flatMap(attemptsFor(op, values, endpointId, options, traced), (a) => readAttempts(a))

  /** `status` for reconciliation: the call's endpoint and timeouts; `once` without read retries. */
  const lookupFor = (a: Attempts, once: boolean): StatusLookup => (query) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      call("STATUS", query, {
        endpoint: a.options.endpoint,
        groupPathForm: a.options.groupPathForm,
        timeoutMs: a.timeoutMs,
        // The call's deadline bounds its lookups too (a passed one: Cancelled, nothing proven).
        deadlineMs: Math.max(0, a.deadlineAt - now),
        retry: once ? { maxRetries: 0 } : a.options.retry
      })) as Effect.Effect<StatusReply, CallError>

  const moneyCall = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean): Effect.Effect<unknown, ReconcileError> => {
    const meta = metaOf(op, values, endpointId)
    return Effect.flatMap(ledger.begin(options.idempotencyKey, fingerprintOf(op.id, endpointId, values, op.fieldNames), meta, boundOf(options)), (begun) =>
      afterBegin(begun, op, values, endpointId, options, traced, meta))
  }

  /** A money call from what `begin` found under its key. */
  const afterBegin = (
    begun: Begin,
    op: PreparedOperation,
    values: Readonly<Record<string, string>>,
    endpointId: string,
    options: CallOptions,
    traced: boolean,
    meta?: IntentMeta
  ): Effect.Effect<unknown, ReconcileError> => {
    switch (begun._tag) {
      case "KeyReused":
        return Effect.fail(new InputError({ operation: op.method, field: "idempotencyKey", rule: "already used for a different request", idempotencyKey: options.idempotencyKey }))
      case "Replay":
        return Exit.map(begun.exit, detachedResult)
      case "Join":
        return awaitJoined(begun.intent, meta ?? metaOf(op, values, endpointId), boundOf(options))
    }
    const intent = begun.intent
    const resume = begun._tag === "Resume"
    return Effect.flatMap(attemptsFor(op, values, endpointId, options, traced, intent.key), (a) => runIntent(a, intent, resume))
  }

  /** Runs a money call's intent to its end; `first`, when given, is a first attempt that already happened. */
  const runIntent = (a: Attempts, intent: CallIntent, resume: boolean, first?: Effect.Effect<Record<string, unknown>, AttemptFailure>): Effect.Effect<unknown, ReconcileError> =>
    Effect.exit(serialized(a, intent, execute(a, intent, resume, first))).pipe(
      Effect.onInterrupt(() => interrupted(a, intent)),
      Effect.flatMap((exit) => {
        const keyed: Exit.Exit<unknown, ReconcileError> = Exit.mapBoth(exit, {
          onFailure: (e) => withIdempotencyKey(e, intent.key),
          onSuccess: (r) => ((r as { type?: unknown }).type === "reconciled" ? r : { ...(r as object), idempotencyKey: intent.key })
        })
        const failure = Exit.isFailure(keyed) ? Option.getOrUndefined(Cause.failureOption(keyed.cause)) : undefined
        const unknown = failure?._tag === "OutcomeUnknown" && failure.mayHaveApplied
        return Effect.zipRight(ledger.finish(intent, keyed, unknown), finishSpan(a, keyed))
      })
    )

  // A call on an existing order holds its order from its snapshot to its proof, and notes the
  // order's sends when it ends (see order-locks.ts).
  const orders = makeOrderLocks()
  const serialized = (a: Attempts, intent: CallIntent, run: Effect.Effect<unknown, ReconcileError>): Effect.Effect<unknown, ReconcileError> => {
    const orderid = a.op.onExistingOrder ? a.values["orderid"] : undefined
    if (orderid === undefined) return run
    return orders.withOrder(orderid, { operation: a.op.method, idempotencyKey: intent.key, deadlineAt: a.deadlineAt, signal: a.options.signal }, intent, () => a.count > 0, run)
  }

  // The caller's fiber was interrupted (e.g. an Effect.timeout around the call): no silent abort. The
  // intent stays "unknown" under its key, so the next call with it (or an identical keyless call)
  // reconciles before sending anything.
  const interrupted = (a: Attempts, intent: CallIntent) =>
    Effect.gen(function*() {
      a.inFlight?.abort?.()
      const now = yield* Clock.currentTimeMillis
      const sent = a.count > 0
      if (sent) {
        intent.unknownSince = now
        intent.lastError = "Interrupted"
      }
      const error = sent
        ? interruptedUnknown(a.op, a.values, intent)
        : new Cancelled({ operation: a.op.method, reason: "interrupted", idempotencyKey: intent.key })
      yield* Effect.logWarning("paykit: call interrupted").pipe(Effect.annotateLogs({ operation: a.op.id, sent, idempotency_key: intent.key }))
      yield* ledger.finish(intent, Exit.fail(error), sent)
    })

  const execute = (a: Attempts, intent: CallIntent, resume: boolean, first?: Effect.Effect<Record<string, unknown>, AttemptFailure>): Effect.Effect<unknown, ReconcileError> => {
    const { op, values } = a
    const query = statusQuery(op, values)
    if (resume && intent.beforeLost === true && op.onExistingOrder) {
      // Another instance sent this call and stopped before its outcome was known; the order as it
      // was before that send is not known here, so nothing can prove the call did not land.
      return Effect.fail(takenOverUnknown(op, values, intent.key))
    }
    // Reconciliation is rare: its context (and its lookups) is built the first time a proof is needed,
    // after the order was read (its `before` is final by then).
    let ctx: ReconcileContext | undefined
    const context = (): ReconcileContext => {
      if (ctx !== undefined) return ctx
      const reconcile = { ...config.reconcile, ...a.options.reconcile }
      ctx = {
        op, values, key: intent.key, before: intent.before,
        lookup: lookupFor(a, false), lookupOnce: lookupFor(a, true),
        // A longer per-call timeout lets the gateway hold a request longer: the window grows with it.
        settleMs: a.options.reconcile?.settleMs ?? Math.max(config.reconcile.settleMs, a.options.timeoutMs ?? 0), pollIntervalMs: reconcile.pollIntervalMs,
        deadlineAt: a.deadlineAt, aborted: () => a.options.signal?.aborted === true
      }
      return ctx
    }
    // The processing window starts when the key's last fetch returned (sendEnded), not when we stopped waiting.
    const settleAfterSend = (cause: string, since: number) => Effect.flatMap(sendEnded(a, since), (from) => settle(context(), cause, from))
    // Another call's send on this order out since the snapshot may land inside the window: then the
    // figures cannot tell its money from this call's (this call stays unknown, and so does a resume).
    const orderid = values["orderid"]
    const mixed = () => {
      if (orderid !== undefined && fetches.outOnOrder(orderid, intent.key)) intent.beforeMixed = true
      return intent.beforeMixed === true
    }
    const mixedUnknown = () => siblingUnknown(op, values, intent, "in-flight")
    const prove = (cause: string, since: number) =>
      !op.onExistingOrder ? reconcileOnce(context(), cause) : Effect.suspend(() => (mixed() ? Effect.fail(mixedUnknown()) : settleAfterSend(cause, since)))
    // An attempt whose outcome is unknown is proven before anything else happens.
    const proven = (sent: Effect.Effect<Record<string, unknown>, AttemptFailure>) =>
      Effect.catchIf(sent, isOutcomeUnknown, (e) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          intent.unknownSince = now
          intent.lastError = e._tag
          return prove(e._tag, now)
        }))
    const attempt = proven(sendOnce(a))
    const send = retryLazily(attempt, scheduleOf(a.options), (e) => isResendable(e) ? Effect.zipRight(logRetry(op, a, e), stillTime(a)) : false, first === undefined ? attempt : proven(first)).pipe(
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
      const orderid = values["orderid"]
      if (op.onExistingOrder && orderid !== undefined && orders.movedSince(orderid, intent)) {
        return Effect.fail(siblingUnknown(op, values, intent, "sent-after"))
      }
      return Effect.flatMap(Effect.either(prove(intent.lastError ?? "unknown", intent.unknownSince)), (proof) =>
        Either.isRight(proof) ? Effect.succeed(proof.right) : proof.left._tag !== "NotApplied" ? Effect.fail(proof.left) : send)
    })
    if (op.onExistingOrder && intent.before === undefined && query !== undefined) {
      // Nothing is sent yet: a failure to read the order is the answer (no outcome is unknown), and
      // the caller's signal ends the read at once (Cancelled: nothing was sent).
      // A sibling's send out before or after the read may land inside this call's window.
      const read = Effect.suspend(() => {
        mixed()
        return lookupFor(a, false)(query)
      })
      const signal = a.options.signal
      const bounded = signal === undefined ? read : Effect.raceFirst(read, whenAborted(signal, () => new Cancelled({ operation: op.method, reason: "signal", idempotencyKey: intent.key })))
      return Effect.flatMap(bounded, (before) => {
        intent.before = before as unknown as StatusSnapshot
        mixed()
        // Durable before the send (a shared store keeps it), so recover() elsewhere can prove the outcome.
        return Effect.zipRight(ledger.recordBefore(intent), proveThenSend)
      })
    }
    return resume ? proveThenSend : send
  }

  const firstAttempt: FirstAttemptDeps = {
    ledger: ledger.sync,
    send: sender,
    attempts: (op, values, endpointId, options, now, key) => makeAttempts(op, values, endpointId, options, false, now, key),
    start: startAttempt,
    afterBegin: (begun, op, values, endpointId, options) => afterBegin(begun, op, values, endpointId, options, false),
    continueRead: (a, firstAttempt) => readAttempts(a, firstAttempt),
    continueMoney: (a, intent, firstAttempt) => runIntent(a, intent, false, firstAttempt),
    interrupted
  }
  // A ledger over a store: its money calls' first attempts without a fiber too (store-first-attempt.ts).
  const fast = withStoreFirstAttempt(makeFirstAttempt(firstAttempt), firstAttempt, ledger.promise, { metaOf, boundOf })

  const pipeline: Pipeline = {
    call,
    callPromise,
    status: (query) => call("STATUS", query) as Effect.Effect<StatusReply, CallError>
  }
  return pipeline
}
