/**
 * The request pipeline shared by all 28 operations: decode input → sign → send → classify reply,
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
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import { Cause, Clock, Deferred, Duration, Effect, Either, Exit, Option, Schedule } from "effect"
import { classifyReply, describeIssue } from "./classify"
import type { GroupPathForm, PayClientConfig, ReconcilePolicy, RetryPolicy } from "./config"
import {
  Cancelled,
  InputError,
  isOutcomeUnknown,
  isTransient,
  OutcomeUnknown,
  withIdempotencyKey,
  type CallError,
  type ReconcileError,
  type StatusSnapshot
} from "./errors"
import { fingerprintOf, memoryIntentLedger, newIdempotencyKey, type CallIntent, type IntentLedger } from "./intents"
import { preparedOperations, type PreparedOperation, type StatusReply } from "./operations"
import { reconcileOnce, settle, statusQuery, unknownOutcome, type ReconcileContext, type StatusLookup } from "./reconcile"
import { signRequest, type SigningKeys } from "./sign"
import type { Transport } from "./transport"

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

/** Runs operations. */
export interface Pipeline {
  readonly call: (operation: OperationId, input: unknown, options?: CallOptions) => Effect.Effect<unknown, ReconcileError>
  /** `status` with the client's defaults (for `awaitFinal` and callbacks). */
  readonly status: StatusLookup
}

/** The retry schedule of a policy: exponential from `baseDelayMs`, capped at `maxDelayMs`, full jitter, `maxRetries` times. */
export function retrySchedule(policy: RetryPolicy): Schedule.Schedule<unknown, unknown> {
  const capped = Schedule.exponential(Duration.millis(policy.baseDelayMs), 2).pipe(
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(policy.maxDelayMs)))
  )
  // jitteredWith draws from Effect's Random service (seedable in tests), never Math.random.
  const jittered = policy.jitter ? Schedule.jitteredWith(capped, { min: 0, max: 1 }) : capped
  return Schedule.intersect(jittered, Schedule.recurs(policy.maxRetries)) as Schedule.Schedule<unknown, unknown>
}

// The signing package's errors carry no secrets or values; keep their field and rule/reason only.
function signingFailure(operation: string, error: unknown): InputError {
  const e = error as { field?: unknown; rule?: unknown; reason?: unknown; currency?: unknown; _tag?: unknown }
  const field = typeof e.field === "string" ? e.field : typeof e.currency === "string" ? "currency" : "input"
  const rule = typeof e.rule === "string" ? e.rule : typeof e.reason === "string" ? e.reason : e._tag === "MissingPrivateKey" ? "required for OAuth RSA-SHA256 operations" : typeof e._tag === "string" ? e._tag : "cannot be signed"
  return new InputError({ operation, field, rule })
}

/** A failure after which resending is provably safe. */
const isResendable = (e: { readonly _tag: string }): boolean =>
  e._tag === "NotApplied" || (e._tag === "TransportError" && !(e as unknown as { mayHaveReachedGateway: boolean }).mayHaveReachedGateway)

/** Failures that are answers in themselves, whatever happened before. */
const FINAL_ANSWERS: ReadonlySet<string> = new Set([
  "OutcomeUnknown", "ReconcileConflict", "GatewayValidationError", "AuthenticationError", "InputError"
])

/** Builds the pipeline for one client. */
export function makePipeline(config: PayClientConfig, keys: SigningKeys, transport: Transport, ledger: IntentLedger = memoryIntentLedger()): Pipeline {
  const call = (operation: OperationId, input: unknown, options: CallOptions = {}): Effect.Effect<unknown, ReconcileError> => {
    const op = preparedOperations[operation]
    const money = op.retry === "reconcile"
    const inputError = (field: string, rule: string) =>
      Effect.fail(new InputError({ operation: op.method, field, rule, idempotencyKey: money ? (options.idempotencyKey ?? newIdempotencyKey()) : undefined }))
    if (typeof input !== "object" || input === null) return inputError("input", "expected an object of wire fields")
    const raw = input as Record<string, unknown>
    const filled = op.hasLogin && raw["login"] === undefined ? { ...raw, login: config.login } : raw
    const decoded = op.decodeInput(filled)
    if (Either.isLeft(decoded)) {
      const { field, rule } = describeIssue(decoded.left)
      return inputError(field, rule)
    }
    const values = decoded.right
    // Checked before anything is read or sent (calls on an existing order read the order first).
    if (op.auth.scheme === "oauth-rsa-sha256" && keys.privateKey === undefined) return inputError("privateKeyPem", "required for OAuth RSA-SHA256 operations")
    const endpointId = options.endpoint === "group" ? (config.endpointGroupId ?? config.endpointId) : config.endpointId
    if (groupPathOf(options) && config.endpointGroupId === undefined) return inputError("endpointGroupId", "required for the /group/{endpointGroupId} path form")
    const run = money ? moneyCall(op, values, endpointId, options) : readCall(op, values, endpointId, options)
    const clientOrderId = op.clientOrderIdField === undefined ? "" : (values[op.clientOrderIdField] ?? "")
    return run.pipe(
      Effect.withSpan(op.spanName, {
        attributes: { operation: op.id, endpoint: endpointId, client_orderid: clientOrderId },
        kind: "client",
        // A stack trace per span costs more than the rest of the span; the operation name suffices.
        captureStackTrace: false
      })
    )
  }

  /** Whether a call goes to the gateway's `/{command}/group/{endpointGroupId}` path form (decision 16). */
  const groupPathOf = (options: CallOptions): boolean =>
    options.endpoint === "group" && (options.groupPathForm ?? config.groupPathForm) === "group-path"

  /** Everything one call's attempts share. */
  interface Attempts {
    readonly op: PreparedOperation
    readonly values: Readonly<Record<string, string>>
    readonly endpointId: string
    readonly options: CallOptions
    readonly timeoutMs: number
    readonly deadlineAt: number
    /** The money call's idempotency key (its fetches are tracked under it); `undefined` for reads. */
    readonly key: string | undefined
    count: number
  }

  // Per idempotency key, the fetch of its last send until that fetch returns (this process only).
  const inFlight = new Map<string, Promise<void>>()
  const track = (key: string, fetching: Promise<unknown>) => {
    const done = fetching.then(() => undefined, () => undefined)
    inFlight.set(key, done)
    void done.then(() => {
      if (inFlight.get(key) === done) inFlight.delete(key)
    })
  }

  // Signed per attempt: an OAuth nonce may not be reused, and the control is cheap.
  const sendOnce = (a: Attempts): Effect.Effect<Record<string, unknown>, CallError | Cancelled> =>
    Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Record<string, unknown>, CallError | Cancelled> => {
      const { op, values, endpointId, options } = a
      if (options.signal?.aborted === true) return Effect.fail(new Cancelled({ operation: op.method, reason: "signal" }))
      const left = a.deadlineAt - now
      if (left <= 0) return Effect.fail(new Cancelled({ operation: op.method, reason: "deadline" }))
      a.count++
      const path = groupPathOf(options) ? op.groupPath : op.path
      const url = config.baseUrl + path.replace("{endpointId}", endpointId)
      let signed
      try {
        signed = signRequest(op.id, op.auth, values, keys, { endpointId, url, login: values["login"] ?? config.login, minorUnits: config.minorUnits })
      } catch (error) {
        return Effect.fail(signingFailure(op.method, error))
      }
      const body = signed.kind === "control" ? { ...values, control: signed.control } : values
      return transport({
        operation: op.method,
        path,
        endpointId,
        body,
        authorization: signed.kind === "header" ? signed.authorization : undefined,
        timeoutMs: Math.max(1, Math.min(a.timeoutMs, left)),
        signal: options.signal,
        onFetch: a.key === undefined ? undefined : (fetching) => track(a.key!, fetching)
      }).pipe(Effect.flatMap((reply) => {
        const result = classifyReply(op, reply)
        return Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left)
      }))
    })

  const attemptsFor = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, key?: string) =>
    Effect.map(Clock.currentTimeMillis, (now): Attempts => ({
      op, values, endpointId, options,
      timeoutMs: options.timeoutMs ?? config.timeoutMs,
      deadlineAt: now + (options.deadlineMs ?? config.deadlineMs),
      key,
      count: 0
    }))

  // An abort or a timeout ends an attempt for us, not its fetch: until that fetch returns the request
  // may still be on its way (a fetch that ignores its signal, an in-process gateway), and an
  // unchanged order proves nothing. The processing window therefore starts when the key's last fetch
  // returned; waiting for it stops at the deadline or the caller's signal (then nothing is proven).
  const sendEnded = (a: Attempts, since: number): Effect.Effect<number> => {
    const pending = a.key === undefined ? undefined : inFlight.get(a.key)
    const signal = a.options.signal
    if (pending === undefined || signal?.aborted === true) return Effect.succeed(since)
    const returned = Effect.async<void>((resume) => {
      let over = false
      const end = () => {
        if (over) return
        over = true
        signal?.removeEventListener("abort", end)
        resume(Effect.void)
      }
      signal?.addEventListener("abort", end, { once: true })
      void pending.then(end)
      return Effect.sync(() => {
        over = true
        signal?.removeEventListener("abort", end)
      })
    })
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      returned.pipe(
        Effect.timeoutOption(Duration.millis(Math.max(0, a.deadlineAt - now))),
        Effect.zipRight(Clock.currentTimeMillis),
        Effect.map((end) => Math.max(since, end))
      ))
  }

  const policyOf = (options: CallOptions): RetryPolicy => options.retry === undefined ? config.retry : { ...config.retry, ...options.retry }

  // `retries` beside `attempt`: what a trace reader filters on (0 for a first-attempt answer).
  const annotate = (a: Attempts, outcome: string) => Effect.annotateCurrentSpan({ attempt: a.count, retries: Math.max(0, a.count - 1), outcome })

  const finishSpan = <A, E extends { readonly _tag: string }>(a: Attempts, effect: Effect.Effect<A, E>) =>
    effect.pipe(
      Effect.tap((r) => annotate(a, (r as { type?: unknown }).type === "reconciled" ? "reconciled" : "ok")),
      Effect.tapError((e) => annotate(a, e._tag))
    )

  const logRetry = (op: PreparedOperation, a: Attempts, error: { readonly _tag: string }) =>
    Effect.logDebug("paykit: retrying").pipe(Effect.annotateLogs({ operation: op.id, attempt: a.count, error: error._tag }))

  const stillTime = (a: Attempts) => Effect.map(Clock.currentTimeMillis, (now) => now < a.deadlineAt && a.options.signal?.aborted !== true)

  const readCall = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions) =>
    Effect.flatMap(attemptsFor(op, values, endpointId, options), (a) =>
      finishSpan(a, sendOnce(a).pipe(
        Effect.retry({
          schedule: retrySchedule(policyOf(options)),
          while: (e) => isTransient(e) ? Effect.zipRight(logRetry(op, a, e), stillTime(a)) : false
        })
      )))

  /** `status` for reconciliation: the call's endpoint and timeouts; `once` without read retries. */
  const lookupFor = (a: Attempts, once: boolean): StatusLookup => (query) =>
    call("STATUS", query, {
      endpoint: a.options.endpoint,
      groupPathForm: a.options.groupPathForm,
      timeoutMs: a.timeoutMs,
      retry: once ? { maxRetries: 0 } : a.options.retry
    }) as Effect.Effect<StatusReply, CallError>

  const moneyCall = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions) =>
    Effect.gen(function*() {
      const query = statusQuery(op, values)
      const begun = yield* ledger.begin(options.idempotencyKey, fingerprintOf(op.id, endpointId, values), {
        operation: op.id,
        method: op.method,
        client_orderid: query?.client_orderid ?? "",
        orderid: values["orderid"],
        amount: values["amount"],
        currency: values["currency"],
        endpoint: endpointId
      })
      switch (begun._tag) {
        case "KeyReused":
          return yield* Effect.fail(new InputError({ operation: op.method, field: "idempotencyKey", rule: "already used for a different request", idempotencyKey: options.idempotencyKey }))
        case "Replay":
          return yield* begun.exit
        case "Join":
          return yield* Deferred.await(begun.intent.done)
      }
      const intent = begun.intent
      const a = yield* attemptsFor(op, values, endpointId, options, intent.key)
      const exit = yield* Effect.exit(execute(a, intent, begun._tag === "Resume")).pipe(
        Effect.onInterrupt(() => interrupted(a, intent))
      )
      const keyed: Exit.Exit<unknown, ReconcileError> = Exit.mapBoth(exit, {
        onFailure: (e) => withIdempotencyKey(e, intent.key),
        onSuccess: (r) => ((r as { type?: unknown }).type === "reconciled" ? r : { ...(r as object), idempotencyKey: intent.key })
      })
      const failure = Exit.isFailure(keyed) ? Option.getOrUndefined(Cause.failureOption(keyed.cause)) : undefined
      const unknown = failure?._tag === "OutcomeUnknown" && failure.mayHaveApplied
      yield* ledger.finish(intent, keyed, unknown)
      return yield* finishSpan(a, keyed)
    })

  // The caller's fiber was interrupted (e.g. an Effect.timeout around the call): no silent abort. The
  // intent stays "unknown" under its key, so the next call with it (or an identical keyless call)
  // reconciles before sending anything.
  const interrupted = (a: Attempts, intent: CallIntent) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const sent = a.count > 0
      if (sent) {
        intent.unknownSince = now
        intent.lastError = "Interrupted"
      }
      const error = sent
        ? new OutcomeUnknown({ operation: a.op.method, client_orderid: statusQuery(a.op, a.values)?.client_orderid ?? "", orderid: a.values["orderid"], lastError: "Interrupted", mayHaveApplied: true, statusBefore: intent.before, next: "call again with the same idempotencyKey: it reconciles before sending", idempotencyKey: intent.key })
        : new Cancelled({ operation: a.op.method, reason: "interrupted", idempotencyKey: intent.key })
      yield* Effect.logWarning("paykit: call interrupted").pipe(Effect.annotateLogs({ operation: a.op.id, sent, idempotency_key: intent.key }))
      yield* ledger.finish(intent, Exit.fail(error), sent)
    })

  const execute = (a: Attempts, intent: CallIntent, resume: boolean): Effect.Effect<unknown, ReconcileError> =>
    Effect.gen(function*() {
      const { op, values } = a
      const query = statusQuery(op, values)
      if (resume && intent.beforeLost === true && op.onExistingOrder) {
        // Another instance sent this call and stopped before its outcome was known; the order as it
        // was before that send is not known here, so nothing can prove the call did not land.
        return yield* Effect.fail(new OutcomeUnknown({
          operation: op.method, client_orderid: query?.client_orderid ?? "", orderid: values["orderid"], lastError: "TakenOver",
          mayHaveApplied: true, statusBefore: undefined, statusAfter: undefined, idempotencyKey: intent.key,
          next: "another instance sent this call and stopped before its outcome was known: compare status with your own records before sending it again"
        }))
      }
      if (op.onExistingOrder && intent.before === undefined && query !== undefined) {
        // Nothing is sent yet: a failure to read the order is the answer (no outcome is unknown).
        intent.before = (yield* lookupFor(a, false)(query)) as unknown as StatusSnapshot
        // Durable before the send (a shared store keeps it), so recover() elsewhere can prove the outcome.
        yield* ledger.recordBefore(intent)
      }
      const reconcile = { ...config.reconcile, ...a.options.reconcile }
      const ctx: ReconcileContext = {
        op, values, key: intent.key, before: intent.before,
        lookup: lookupFor(a, false), lookupOnce: lookupFor(a, true),
        // A longer per-call timeout lets the gateway hold a request longer: the window grows with it.
        settleMs: a.options.reconcile?.settleMs ?? Math.max(config.reconcile.settleMs, a.options.timeoutMs ?? 0), pollIntervalMs: reconcile.pollIntervalMs,
        deadlineAt: a.deadlineAt, aborted: () => a.options.signal?.aborted === true
      }
      const settleAfterSend = (cause: string, since: number) => Effect.flatMap(sendEnded(a, since), (from) => settle(ctx, cause, from))
      const prove = (cause: string, since: number) => op.onExistingOrder ? settleAfterSend(cause, since) : reconcileOnce(ctx, cause)
      if (resume && intent.unknownSince !== undefined) {
        const proof = yield* Effect.either(prove(intent.lastError ?? "unknown", intent.unknownSince))
        if (Either.isRight(proof)) return proof.right
        if (proof.left._tag !== "NotApplied") return yield* Effect.fail(proof.left)
      }
      const attempt = sendOnce(a).pipe(
        Effect.catchIf(isOutcomeUnknown, (e) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            intent.unknownSince = now
            intent.lastError = e._tag
            return prove(e._tag, now)
          }))
      )
      const sent = attempt.pipe(
        Effect.retry({
          schedule: retrySchedule(policyOf(a.options)),
          while: (e) => isResendable(e) ? Effect.zipRight(logRetry(op, a, e), stillTime(a)) : false
        })
      )
      return yield* sent.pipe(Effect.catchAll((e): Effect.Effect<unknown, ReconcileError> => {
        if (intent.unknownSince === undefined) return Effect.fail(e as ReconcileError)
        if (e._tag === "NotApplied" && e.settled) return Effect.fail(unknownOutcome(ctx, e.cause, e.statusAfter, false))
        if (FINAL_ANSWERS.has(e._tag)) return Effect.fail(e as ReconcileError)
        // Retries or time ran out after an unknown outcome: prove what the gateway holds, or say so.
        return settleAfterSend(intent.lastError ?? e._tag, intent.unknownSince).pipe(
          Effect.catchTag("NotApplied", (n) => Effect.fail(unknownOutcome(ctx, n.cause, n.statusAfter, false)))
        )
      }))
    })

  const pipeline: Pipeline = {
    call,
    status: (query) => call("STATUS", query) as Effect.Effect<StatusReply, CallError>
  }
  return pipeline
}
