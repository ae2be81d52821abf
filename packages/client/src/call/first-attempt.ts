/**
 * The happy path without a fiber. With no tracer installed, a call's first attempt runs as plain
 * callbacks: the same checked input, the same signed request through the same sender (timeout,
 * signal, abort, per-key fetch tracking), the same reply classification, and for a money-moving
 * call the same ledger, through its synchronous `begin`/`finish`. Only a first attempt that ends
 * in the typed reply finishes here. Any other outcome (an error reply, a network error, a timeout,
 * an abort, an undecodable body, a failure to sign) is handed to the Effect pipeline as the first
 * attempt's result, with the attempt counted: the pipeline retries, reconciles or fails exactly as
 * when it made that attempt itself, and never sends it again.
 *
 * A ledger over a store (its `begin` does I/O) takes the same path through
 * `store-first-attempt.ts`, which records the intent by a Promise write before this send.
 *
 * Not taken (the Effect pipeline runs the whole call): a call on an existing order (it reads the order before sending), a key that is replayed, joined
 * or resumed (handed over as `begin` found it).
 *
 * @packageDocumentation
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { Attempts, CallOptions } from "./attempts"
import { classifyReply } from "./classify"
import type { Cancelled, CallError, ReconcileError } from "../errors"
import { fingerprintOf, type Begin, type CallIntent, type SyncIntentLedger } from "../intents/ledger"
import type { PreparedOperation } from "../operations/table"
import { runToPromise } from "./run"
import { isReply, type Sender, type TransportRequest } from "../transport/fetch"

/** How an attempt failed (the Effect pipeline's error channel for one attempt). */
export type AttemptFailure = CallError | Cancelled

/** What the first attempt needs from the pipeline it hands over to. */
export interface FirstAttemptDeps {
  /** The in-memory ledger's synchronous half; `undefined` for a ledger over a store. */
  readonly ledger: SyncIntentLedger | undefined
  readonly send: Sender
  /** The call's shared attempt state, its deadline from `now`. */
  readonly attempts: (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, now: number, key: string | undefined) => Attempts
  /** Counts and signs an attempt: the request to send, or the failure that ends it before sending. */
  readonly start: (a: Attempts, now: number) => TransportRequest | AttemptFailure
  /** A money call whose key `begin` did not find fresh, from there on. */
  readonly afterBegin: (begun: Begin, op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions) => Effect.Effect<unknown, ReconcileError>
  /** A read after its first attempt failed with `first`. */
  readonly continueRead: (a: Attempts, first: Effect.Effect<Record<string, unknown>, AttemptFailure>) => Effect.Effect<unknown, ReconcileError>
  /** A money call after its first attempt failed with `first`. */
  readonly continueMoney: (a: Attempts, intent: CallIntent, first: Effect.Effect<Record<string, unknown>, AttemptFailure>) => Effect.Effect<unknown, ReconcileError>
  /** A money call's interruption handler (the fetch aborted, the intent left unknown). */
  readonly interrupted: (a: Attempts, intent: CallIntent) => Effect.Effect<void>
}

/** Calls without a fiber on the happy path; `undefined` where the Effect pipeline runs the whole call. */
export interface FirstAttempt {
  readonly promise: (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions) => Promise<unknown> | undefined
  /** The same for an Effect caller: one `Effect.async` step instead of the pipeline's steps. */
  readonly effect: (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, clock: Clock.Clock) => Effect.Effect<unknown, ReconcileError> | undefined
}

const noop = () => {}

/** Builds the first-attempt path over a pipeline's parts. */
export function makeFirstAttempt(deps: FirstAttemptDeps): FirstAttempt {
  const { ledger, send, attempts, start } = deps

  /** Runs one attempt; `onEnd` gets the typed reply or the failure. Returns the interruption. */
  const attempt = (a: Attempts, now: number, onEnd: (outcome: Either.Either<Record<string, unknown>, AttemptFailure>) => void): () => void => {
    const request = start(a, now)
    if ("_tag" in request) {
      onEnd(Either.left(request))
      return noop
    }
    return send(request, (result) => onEnd(isReply(result) ? classifyReply(a.op, result) : Either.left(result)))
  }

  const moneyEligible = (op: PreparedOperation): boolean => ledger !== undefined && !op.onExistingOrder

  // The reply is the call's own new object (the reply decoder builds it): the key is added to it
  // rather than to a copy, last, as the pipeline's copy has it.
  const keyed = (reply: Record<string, unknown>, intent: CallIntent): Record<string, unknown> => {
    reply["idempotencyKey"] = intent.key
    ledger!.finish(intent, Exit.succeed(reply), false)
    return reply
  }

  const promise: FirstAttempt["promise"] = (op, values, endpointId, options) => {
    if (op.retry !== "reconcile") {
      const now = Date.now()
      const a = attempts(op, values, endpointId, options, now, undefined)
      return new Promise((resolve) => {
        attempt(a, now, (outcome) => resolve(Either.isRight(outcome) ? outcome.right : runToPromise(deps.continueRead(a, Effect.fail(outcome.left)))))
      })
    }
    if (!moneyEligible(op)) return undefined
    const begun = ledger!.begin(options.idempotencyKey, fingerprintOf(op.id, endpointId, values, op.fieldNames))
    if (begun._tag !== "Fresh") return runToPromise(deps.afterBegin(begun, op, values, endpointId, options))
    const intent = begun.intent
    // The Promise facade runs on Effect's default clock, which is `Date.now()`.
    const now = Date.now()
    const a = attempts(op, values, endpointId, options, now, intent.key)
    return new Promise((resolve) => {
      attempt(a, now, (outcome) =>
        resolve(Either.isRight(outcome) ? keyed(outcome.right, intent) : runToPromise(deps.continueMoney(a, intent, Effect.fail(outcome.left)))))
    })
  }

  // The caller's fiber is running this call already (the pipeline looked up its tracer and clock).
  const effect: FirstAttempt["effect"] = (op, values, endpointId, options, clock) => {
    if (op.retry !== "reconcile") {
      return Effect.async<unknown, ReconcileError>((resume) => {
        const now = clock.unsafeCurrentTimeMillis()
        const a = attempts(op, values, endpointId, options, now, undefined)
        const interrupt = attempt(a, now, (outcome) => resume(Either.isRight(outcome) ? Effect.succeed(outcome.right) : deps.continueRead(a, Effect.fail(outcome.left))))
        // Interruption aborts the fetch, as the transport's canceler does for a read.
        return Effect.sync(interrupt)
      })
    }
    if (!moneyEligible(op)) return undefined
    const fingerprint = fingerprintOf(op.id, endpointId, values, op.fieldNames)
    return Effect.async<unknown, ReconcileError>((resume) => {
      const begun = ledger!.begin(options.idempotencyKey, fingerprint)
      if (begun._tag !== "Fresh") {
        resume(deps.afterBegin(begun, op, values, endpointId, options))
        return
      }
      const intent = begun.intent
      const now = clock.unsafeCurrentTimeMillis()
      const a = attempts(op, values, endpointId, options, now, intent.key)
      let ended = false
      attempt(a, now, (outcome) => {
        ended = true
        resume(Either.isRight(outcome) ? Effect.succeed(keyed(outcome.right, intent)) : deps.continueMoney(a, intent, Effect.fail(outcome.left)))
      })
      // Interrupted while the attempt runs: the pipeline's own handler (aborts the fetch through
      // `a.inFlight`, leaves the intent unknown once sent). After the attempt ended, the
      // continuation has its own.
      return ended ? undefined : Effect.suspend(() => deps.interrupted(a, intent))
    })
  }

  return { promise, effect }
}
