/**
 * The call entry shared by all 28 operations and by `request()` calls (their check is
 * `request.ts`'s): check → (first attempt) → read or money steps, inside one span per call when a
 * tracer is installed.
 *
 * - Reads retry transient failures (`isTransient`) on the policy's exponential, jittered schedule.
 * - Money-moving calls run under an idempotency key (`money.ts`): the same key replays or joins,
 *   calls on an existing order snapshot the order first, unknown outcomes are proven.
 * - `deadlineMs` bounds the whole call; `signal` aborts it.
 * - Without a tracer, the first attempt runs without a fiber (a Promise caller's call runs none at
 *   all when that attempt ends in the typed reply); any other outcome continues in the same Effect
 *   steps as the attempt that happened, never sent again.
 *
 * A Promise `sale`, from `promise.ts` to the socket: `callPromise` (here) → `checkCall`
 * (`check.ts`) → `firstPromise` → the ledger's `begin` (`intents/ledger.ts`) → `runAttempt`
 * (`attempt.ts`: start, sign, send, classify) → `send` (`transport/fetch.ts`) → `succeeded`.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as Tracer from "effect/Tracer"
import type { PayClientConfig } from "../config"
import { isTransient, type CallError, type ReconcileError } from "../errors"
import { fingerprintOf, memoryIntentLedger, type Begin, type CallIntent, type IntentLedger, type SyncIntentLedger } from "../intents/ledger"
import type { StatusLookup } from "../intents/reconcile"
import type { PreparedOperation, StatusReply } from "../operations/table"
import type { Sender } from "../transport/fetch"
import { attemptEffect, newAttempts, recordLast, runAttempt, type Attempts } from "./attempt"
import { boundOf, checkCall, metaOf, NO_OPTIONS, type Checked } from "./check"
import { makeCallContext, type CallContext } from "./context"
import { afterBegin, attemptsFor, finishSpan, interrupted, logRetry, moneyCall, runIntent, scheduleOf, stillTime, type FirstAttempt } from "./money"
import type { CallOptions } from "./options"
import { checkRequest } from "./request"
import { retryLazily } from "./retry"
import { runToPromise } from "../transport/run-promise"
import type { SigningKeys } from "./sign"

/** Runs one client's operations. */
export interface Pipeline {
  readonly call: (operation: OperationId, input: unknown, options?: CallOptions) => Effect.Effect<unknown, ReconcileError>
  /** The same call for a Promise caller: no fiber unless the first attempt did not end in the reply. */
  readonly callPromise: (operation: OperationId, input: unknown, options?: CallOptions) => Promise<unknown>
  /** A `request()` call (docs/decisions.md#24-a-signed-escape-hatch): its description checked, then the steps every call runs. */
  readonly request: (description: unknown, options?: CallOptions) => Effect.Effect<unknown, ReconcileError>
  /** The same `request()` call for a Promise caller. */
  readonly requestPromise: (description: unknown, options?: CallOptions) => Promise<unknown>
  /** `status` with the client's defaults (for `awaitFinal` and callbacks). */
  readonly status: StatusLookup
}

/** Builds the pipeline of one client: its call context, and the entries over it. */
export function makePipeline(config: PayClientConfig, keys: SigningKeys, send: Sender, ledger: IntentLedger = memoryIntentLedger()): Pipeline {
  const ctx = makeCallContext(config, keys, send, ledger, statusCall)
  return {
    call: (operation, input, options) => call(ctx, operation, input, options),
    callPromise: (operation, input, options) => callPromise(ctx, operation, input, options),
    request: (description, options = NO_OPTIONS) => runChecked(ctx, checkRequest(ctx.config, ctx.keys, description, options), options),
    requestPromise: (description, options = NO_OPTIONS) => {
      try {
        return runCheckedPromise(ctx, checkRequest(ctx.config, ctx.keys, description, options), options)
      } catch (defect) {
        return Promise.reject(defect)
      }
    },
    status: (query) => call(ctx, "STATUS", query) as Effect.Effect<StatusReply, CallError>
  }
}

// Reconciliation reads the order through the client's own `status` call, span included.
const statusCall = (ctx: CallContext) => (query: { client_orderid: string; orderid?: string }, options: CallOptions) =>
  call(ctx, "STATUS", query, options) as Effect.Effect<StatusReply, CallError>

/**
 * The tracer Effect runs with when the application installed none. Its spans reach no exporter, so
 * under it a call opens no span at all (and annotates none): a span costs more than the rest of the
 * call's Effect plumbing. With any other tracer (OpenTelemetry, a test's) every call has its span.
 */
const nativeTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** One call as an Effect: checked, then run ({@link runChecked}). */
export function call(ctx: CallContext, operation: OperationId, input: unknown, options: CallOptions = NO_OPTIONS): Effect.Effect<unknown, ReconcileError> {
  return runChecked(ctx, checkCall(ctx.config, ctx.keys, operation, input, options), options)
}

/**
 * A checked call (a typed one, or a `request()` call) as an Effect: its first attempt without a
 * fiber when untraced, else the whole call's steps in its span.
 */
function runChecked(ctx: CallContext, checked: Checked, options: CallOptions): Effect.Effect<unknown, ReconcileError> {
  if (checked.failure !== undefined) return checked.failure
  const { op, values, endpointId } = checked
  const money = op.retry === "reconcile"
  // One look at the fiber for the tracer, the clock and whether it may be interrupted here.
  return Effect.withFiberRuntime((fiber, status) => {
    const services = fiber.currentDefaultServices
    if (Context.get(services, Tracer.Tracer) === nativeTracer) {
      return firstEffect(ctx, op, values, endpointId, options, Context.get(services, Clock.Clock), RuntimeFlags.interruption(status.runtimeFlags)) ??
        (money ? moneyCall(ctx, op, values, endpointId, options, false) : readCall(ctx, op, values, endpointId, options, false))
    }
    const run = money ? moneyCall(ctx, op, values, endpointId, options, true) : readCall(ctx, op, values, endpointId, options, true)
    const clientOrderId = op.clientOrderIdField === undefined ? "" : (values[op.clientOrderIdField] ?? "")
    return run.pipe(
      Effect.withSpan(op.spanName, {
        attributes: spanAttributes(ctx, op, endpointId, clientOrderId),
        kind: "client",
        // A stack trace per span costs more than the rest of the span; the operation name suffices.
        captureStackTrace: false
      })
    )
  })
}

/**
 * A call span's attributes as it opens: PayKit's own (`operation`, `endpoint`, `client_orderid`,
 * and their `paykit.*` names) and OpenTelemetry's HTTP client ones
 * (docs/decisions.md#23-request-hooks); the status code and `url.full` are added as the call ends.
 */
function spanAttributes(ctx: CallContext, op: PreparedOperation, endpointId: string, clientOrderId: string): Record<string, unknown> {
  const attributes: Record<string, unknown> = {
    operation: op.id,
    endpoint: endpointId,
    client_orderid: clientOrderId,
    "paykit.operation": op.id,
    "paykit.endpoint_id": endpointId,
    "paykit.client_orderid": clientOrderId,
    "http.request.method": "POST"
  }
  const server = ctx.server
  if (server !== undefined) {
    attributes["server.address"] = server.address
    attributes["server.port"] = server.port
  }
  return attributes
}

/** One call for a Promise caller (Effect's default runtime: the native tracer, no span). */
export function callPromise(ctx: CallContext, operation: OperationId, input: unknown, options: CallOptions = NO_OPTIONS): Promise<unknown> {
  try {
    return runCheckedPromise(ctx, checkCall(ctx.config, ctx.keys, operation, input, options), options)
  } catch (defect) {
    // A bug, not a typed failure: still a rejection (as the runtime makes it), never a throw.
    return Promise.reject(defect)
  }
}

/** A checked call for a Promise caller; throws only on a bug (the caller turns it into a rejection). */
function runCheckedPromise(ctx: CallContext, checked: Checked, options: CallOptions): Promise<unknown> {
  if (checked.failure !== undefined) return runToPromise(checked.failure)
  const { op, values, endpointId } = checked
  return firstPromise(ctx, op, values, endpointId, options) ??
    runToPromise(op.retry === "reconcile" ? moneyCall(ctx, op, values, endpointId, options, false) : readCall(ctx, op, values, endpointId, options, false))
}

/** A read's attempts; `first`, when given, is a first attempt that already happened. */
function readAttempts(ctx: CallContext, a: Attempts, first?: FirstAttempt): Effect.Effect<unknown, ReconcileError> {
  return finishSpan(ctx, a, retryLazily(attemptEffect(ctx, a), scheduleOf(ctx, a.options), (e) => isTransient(e) ? Effect.zipRight(logRetry(a, e), stillTime(a)) : false, first))
}

function readCall(ctx: CallContext, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, traced: boolean): Effect.Effect<unknown, ReconcileError> {
  return Effect.flatMap(attemptsFor(ctx, op, values, endpointId, options, traced), (a) => readAttempts(ctx, a))
}

// A call on an existing order reads the order before its first send: the Effect steps run it whole.
const fiberFreeMoney = (op: PreparedOperation): boolean => !op.onExistingOrder

/**
 * A Promise call's first attempt without a fiber; `undefined` where the Effect steps run the whole
 * call. Only a first attempt that ends in the typed reply finishes here; any other outcome (an
 * error reply, a network error, a timeout, an abort, an undecodable body, a failure to sign) goes
 * on in the Effect steps as the attempt that happened, counted and never sent again. A key `begin`
 * does not find fresh (a replay, a join, a take-over, a conflict) goes on from that answer.
 */
function firstPromise(ctx: CallContext, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions): Promise<unknown> | undefined {
  if (op.retry !== "reconcile") {
    // The Promise facade runs on Effect's default clock, which is `Date.now()`.
    const now = Date.now()
    const a = newAttempts(ctx, op, values, endpointId, options, false, now, undefined)
    return new Promise((resolve) => {
      runAttempt(ctx, a, now, (outcome) => resolve(Either.isRight(outcome) ? recordLast(a, outcome.right) : runToPromise(readAttempts(ctx, a, Effect.fail(outcome.left)))))
    })
  }
  if (!fiberFreeMoney(op)) return undefined
  const fingerprint = fingerprintOf(op.id, endpointId, values, op.fieldNames)
  const { sync, promise } = ctx.ledger
  if (promise !== undefined) {
    // Over a store: a `Fresh` intent is recorded there before its first send.
    const begun = promise.begin(options.idempotencyKey, fingerprint, metaOf(op, values, endpointId), boundOf(ctx.config, options))
    return begun instanceof Promise ? begun.then((b) => moneyFirstPromise(ctx, b, op, values, endpointId, options)) : moneyFirstPromise(ctx, begun, op, values, endpointId, options)
  }
  if (sync === undefined) return undefined
  return moneyFirstPromise(ctx, sync.begin(options.idempotencyKey, fingerprint), op, values, endpointId, options)
}

function moneyFirstPromise(ctx: CallContext, begun: Begin, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions): Promise<unknown> {
  if (begun._tag !== "Fresh") return runToPromise(afterBegin(ctx, begun, op, values, endpointId, options, false))
  const intent = begun.intent
  const now = Date.now()
  const a = newAttempts(ctx, op, values, endpointId, options, false, now, intent.key, intent.deadlineAt)
  return new Promise((resolve) => {
    runAttempt(ctx, a, now, (outcome) =>
      resolve(Either.isRight(outcome) ? succeeded(ctx, intent, recordLast(a, outcome.right)) : runToPromise(runIntent(ctx, a, intent, false, Effect.fail(outcome.left)))))
  })
}

/**
 * A first attempt's typed reply as the call's result. The reply is the call's own new object (the
 * reply decoder builds it): the key is added to it, last, as the Effect steps' copy has it; the
 * ledger keeps its own copy (over a store: written before the call resolves).
 */
function succeeded(ctx: CallContext, intent: CallIntent, reply: Record<string, unknown>): Record<string, unknown> | Promise<Record<string, unknown>> {
  const { sync, promise } = ctx.ledger
  if (promise === undefined) return finishedSync(sync!, intent, reply)
  reply["idempotencyKey"] = intent.key
  return promise.succeed(intent, reply).then(() => reply)
}

/** {@link succeeded} on the in-memory ledger: recorded at once. */
function finishedSync(sync: SyncIntentLedger, intent: CallIntent, reply: Record<string, unknown>): Record<string, unknown> {
  reply["idempotencyKey"] = intent.key
  sync.finish(intent, Exit.succeed(reply), false)
  return reply
}

/**
 * An untraced Effect call's first attempt as one `Effect.async` step instead of the Effect steps;
 * `undefined` where those run the whole call (a money call on a store: its `begin` is I/O). The
 * caller's fiber is running this call already (the entry looked up its tracer and clock).
 */
function firstEffect(ctx: CallContext, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, clock: Clock.Clock, interruptible: boolean): Effect.Effect<unknown, ReconcileError> | undefined {
  if (op.retry !== "reconcile") {
    let interrupt: (() => void) | undefined
    const attempt = Effect.async<unknown, ReconcileError>((resume) => {
      const now = clock.unsafeCurrentTimeMillis()
      const a = newAttempts(ctx, op, values, endpointId, options, false, now, undefined)
      interrupt = runAttempt(ctx, a, now, (outcome) => resume(Either.isRight(outcome) ? Exit.succeed(recordLast(a, outcome.right)) : readAttempts(ctx, a, Effect.fail(outcome.left))), clock)
    })
    // Interruption aborts the fetch, as a read's attempt does.
    return onInterruptOf(attempt, () => Effect.sync(interrupt!), interruptible)
  }
  const sync = ctx.ledger.sync
  if (sync === undefined || !fiberFreeMoney(op)) return undefined
  const fingerprint = fingerprintOf(op.id, endpointId, values, op.fieldNames)
  // Interrupted while the attempt runs: the money steps' own handler (aborts the fetch through
  // `a.inFlight`, leaves the intent unknown once sent), made only then. An attempt that ended
  // before the step suspended has none here: its continuation has its own.
  let running: Attempts | undefined
  let runningIntent: CallIntent | undefined
  const attempt = Effect.async<unknown, ReconcileError>((resume) => {
    const begun = sync.begin(options.idempotencyKey, fingerprint)
    if (begun._tag !== "Fresh") {
      resume(afterBegin(ctx, begun, op, values, endpointId, options, false))
      return
    }
    const intent = begun.intent
    const now = clock.unsafeCurrentTimeMillis()
    const a = newAttempts(ctx, op, values, endpointId, options, false, now, intent.key, intent.deadlineAt)
    let ended = false
    runAttempt(ctx, a, now, (outcome) => {
      ended = true
      resume(Either.isRight(outcome) ? Exit.succeed(finishedSync(sync, intent, recordLast(a, outcome.right))) : runIntent(ctx, a, intent, false, Effect.fail(outcome.left)))
    }, clock)
    if (!ended) {
      running = a
      runningIntent = intent
    }
  })
  return onInterruptOf(attempt, () => running === undefined || runningIntent === undefined ? undefined : interrupted(ctx, running, runningIntent), interruptible)
}

/**
 * `step` with `cleanup()` run when it ends interrupted, as `Effect.onInterrupt` runs it (the
 * cleanup's own failure joins the step's cause), in fewer steps of the fiber: one uninterruptible
 * region around one failure handler, the step restored to the caller's interruptibility
 * (`interruptible`, read from the fiber as the call starts: what `Effect.uninterruptibleMask`'s
 * `restore` would give it), and a reply that passes the handler by. `cleanup` is looked up only on
 * interruption, so an attempt chooses its handler as it starts.
 */
function onInterruptOf<A, E>(step: Effect.Effect<A, E>, cleanup: () => Effect.Effect<void> | undefined, interruptible: boolean): Effect.Effect<A, E> {
  return Effect.uninterruptible(Effect.catchAllCause(interruptible ? Effect.interruptible(step) : step, (cause) => {
    const handler = Cause.isInterruptedOnly(cause) ? cleanup() : undefined
    if (handler === undefined) return Exit.failCause(cause)
    return Effect.matchCauseEffect(handler, {
      onFailure: (cause2) => Exit.failCause(Cause.sequential(cause, cause2)),
      onSuccess: () => Exit.failCause(cause)
    })
  }))
}
