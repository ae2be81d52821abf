/**
 * The happy path without a fiber for a client with a store, as `first-attempt.ts` is for the
 * in-memory ledger. A money call's intent is recorded in the store (a Promise of the store's own
 * write) before the first send, exactly as the Effect pipeline records it; the send, its timeout,
 * signal and classification are the pipeline's own parts; a typed reply's outcome is recorded in
 * the store before the call resolves. Only a first attempt that ends in the typed reply finishes
 * here. Any other outcome is handed to the Effect pipeline as the first attempt's result, with the
 * attempt counted and the intent held: it retries, reconciles, records or leaves the intent
 * unfinished for `recover()` exactly as when it made that attempt itself, and never sends it again.
 * A key the store answers with anything but `Recorded` (a replay, a join, a take-over, a conflict)
 * goes on as the store ledger's Effect from that answer, then the pipeline.
 *
 * Not taken: a call on an existing order (it reads and records the order before sending), an
 * Effect caller (its fiber runs the pipeline), a client without a store (`first-attempt.ts`).
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CallOptions } from "../call/attempts"
import { classifyReply } from "../call/classify"
import type { AttemptFailure, FirstAttempt, FirstAttemptDeps } from "../call/first-attempt"
import { fingerprintOf, type Begin, type BeginBound, type CallIntent, type IntentMeta, type PromiseIntentLedger } from "../intents/ledger"
import type { PreparedOperation } from "../operations/table"
import { runToPromise } from "../call/run"
import { isReply } from "../transport/fetch"

/** What the store path needs from the pipeline besides the first attempt's parts. */
export interface StoreFirstAttemptDeps {
  /** What the store records about a call. */
  readonly metaOf: (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string) => IntentMeta
  /** The call's deadline and signal, bounding a wait on another instance's intent. */
  readonly boundOf: (options: CallOptions) => BeginBound
}

/**
 * `base` with money calls on a store-backed ledger (`ledger`) taken without a fiber; `base` itself
 * when the ledger has no Promise half (the in-memory one: `base` takes its calls).
 */
export function withStoreFirstAttempt(base: FirstAttempt, deps: FirstAttemptDeps, ledger: PromiseIntentLedger | undefined, call: StoreFirstAttemptDeps): FirstAttempt {
  if (ledger === undefined) return base
  const { send, attempts, start } = deps

  const sent = (op: PreparedOperation, values: Readonly<Record<string, string>>, endpointId: string, options: CallOptions, intent: CallIntent): Promise<unknown> =>
    new Promise((resolve) => {
      // The Promise facade runs on Effect's default clock, which is `Date.now()`.
      const now = Date.now()
      const a = attempts(op, values, endpointId, options, now, intent.key)
      const onEnd = (outcome: Either.Either<Record<string, unknown>, AttemptFailure>) => {
        if (Either.isLeft(outcome)) return resolve(runToPromise(deps.continueMoney(a, intent, Effect.fail(outcome.left))))
        // The reply is the call's own new object (the reply decoder builds it): the key is added to
        // it, last, as the pipeline's copy has it; the ledger keeps its own copy.
        const reply = outcome.right
        reply["idempotencyKey"] = intent.key
        resolve(ledger.succeed(intent, reply).then(() => reply))
      }
      const request = start(a, now)
      if ("_tag" in request) onEnd(Either.left(request))
      else send(request, (result) => onEnd(isReply(result) ? classifyReply(a.op, result) : Either.left(result)))
    })

  const promise: FirstAttempt["promise"] = (op, values, endpointId, options) => {
    if (op.retry !== "reconcile" || op.onExistingOrder) return base.promise(op, values, endpointId, options)
    const fingerprint = fingerprintOf(op.id, endpointId, values, op.fieldNames)
    const next = (begun: Begin): Promise<unknown> =>
      begun._tag === "Fresh" ? sent(op, values, endpointId, options, begun.intent) : runToPromise(deps.afterBegin(begun, op, values, endpointId, options))
    const begun = ledger.begin(options.idempotencyKey, fingerprint, call.metaOf(op, values, endpointId), call.boundOf(options))
    return begun instanceof Promise ? begun.then(next) : next(begun)
  }

  return { promise, effect: base.effect }
}
