/**
 * The idempotency ledger and the callback claims on a shared `PayStore` (memory, PGlite or
 * PostgreSQL), so merchant retries are replays across processes and restarts, and a callback's
 * effect runs once across a fleet.
 *
 * In-process joins stay in memory (a Deferred is cheaper than polling a database); the store decides
 * between processes: `recordIntent` before the first send (`Recorded` → send; `Finished` → replay a
 * success; `InFlight` → wait for the holder's outcome or lease; `TakenOver` → an earlier holder died:
 * reconcile before any resend; `Conflict` → the key names another request), `recordOutcome` after.
 * An unknown outcome is not recorded: the intent stays unfinished for the next call with its key or
 * for `recover()`. The same decisions are offered as Promises (`promise`) for the pipeline's
 * fiber-free first attempt (`call/pipeline.ts`): a fresh intent's write and a success's
 * outcome run as the store's own Promise writes (`store/writes.ts`); every other answer goes on as
 * `claim`, the Effect both paths share.
 *
 * @packageDocumentation
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { CallbackClaimStore, ClaimResult } from "../callbacks/handler"
import { whenAborted } from "../call/options"
import { InputError, OutcomeUnknown, withIdempotencyKey, type ReconcileError } from "../errors"
import { memoryIntentLedger, serialNumberOf, type Begin, type BeginBound, type CallIntent, type IntentLedger, type IntentMeta, type OrderCall, type PromiseIntentLedger } from "../intents/ledger"
import { preparedOperations } from "../operations/table"
import { siblingMoved } from "../intents/order-siblings"
import { runToPromise } from "../call/run"
import type { PayStoreService } from "./service"
import { StoreError, type IntentInput, type IntentOutcome, type JsonValue, type RecordIntentResult, type StoreInputError } from "./types"
import { storeWritesOf } from "./writes"

/** How the store-backed ledger holds intents. */
export interface StoreLedgerOptions {
  /** How long a call holds its intent before another instance may take it over (default 120 000 ms). */
  readonly leaseMs?: number | undefined
  /** How often a call waiting on another instance's intent looks again (default 250 ms). */
  readonly pollMs?: number | undefined
}

const toJson = (value: unknown): JsonValue => JSON.parse(JSON.stringify(value ?? null)) as JsonValue

const returned = (r: Record<string, unknown>, data: JsonValue): IntentOutcome =>
  ({ _tag: "Returned", status: String(r["status"] ?? "unknown"), orderid: r["paynet-order-id"] as string | undefined, data })

function outcomeOf(exit: Exit.Exit<unknown, ReconcileError>): IntentOutcome {
  if (Exit.isSuccess(exit)) {
    const r = exit.value as Record<string, unknown>
    return returned(r, toJson(r))
  }
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  return { _tag: "Failed", errorTag: failure?._tag ?? "Interrupted" }
}

/** The idempotency ledger over a `PayStore`. */
export function storeIntentLedger(store: PayStoreService, options: StoreLedgerOptions = {}): IntentLedger {
  const memory = memoryIntentLedger()
  const leaseMs = options.leaseMs ?? 120_000
  const pollMs = options.pollMs ?? 250

  const record = (key: string, meta: IntentMeta) => store.recordIntent(intentInput(key, meta), { leaseMs })

  const begin = (key: string | undefined, fingerprint: string, meta: IntentMeta, bound?: BeginBound): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> =>
    Effect.flatMap(Effect.zip(memory.begin(key, fingerprint, meta), Clock.currentTimeMillis), ([local, startedAt]) =>
      local._tag !== "Fresh" ? Effect.succeed(local) : claim(local.intent, meta, startedAt, bound, record(local.intent.key, meta)))

  /**
   * What the store says about a call's fresh local intent, from `first` (the store's first answer,
   * or the Effect that asks for it) on: the intent to send, the replay, the join, the take-over.
   */
  const claim = (
    intent: CallIntent,
    meta: IntentMeta,
    startedAt: number,
    bound: BeginBound | undefined,
    first: Effect.Effect<RecordIntentResult, StoreError | StoreInputError>
  ): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> => {
    const local: Begin = { _tag: "Fresh", intent }
    const deadlineAt = startedAt + (bound?.deadlineMs ?? Number.POSITIVE_INFINITY)
    // This call ends without the store's say (it failed, or the caller stopped waiting): the local
    // placeholder is closed with the same failure and forgotten, so a later call with the key (or
    // an identical keyless one) asks the store again instead of joining a call that is over.
    const abandon = <E extends StoreError | StoreInputError | OutcomeUnknown>(e: E): Effect.Effect<never, E> => {
      const keyed = withIdempotencyKey(e, intent.key)
      return Effect.zipRight(memory.finish(intent, Exit.fail(keyed), false), Effect.fail(keyed))
    }
    const heldElsewhere = () =>
      new OutcomeUnknown({
        operation: meta.method, client_orderid: meta.client_orderid, orderid: meta.orderid, lastError: "HeldElsewhere",
        mayHaveApplied: true, statusBefore: undefined, statusAfter: undefined, idempotencyKey: intent.key,
        next: "another instance holds this idempotencyKey and may have sent the call: call again with the same key later (it waits for that outcome or reconciles)"
      })
    // The local intent was only a placeholder for the store's answer: close it so joiners follow.
    const settleWith = (b: Begin): Effect.Effect<Begin> =>
      Effect.as(memory.finish(intent, b._tag === "Replay" ? b.exit : Exit.fail(new InputError({ operation: meta.method, field: "idempotencyKey", rule: "already used for a different request", idempotencyKey: intent.key })), false), b)
    const decide = (attempt: number): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> =>
      Effect.flatMap(attempt === 1 ? first : record(intent.key, meta), (r): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> => {
        switch (r._tag) {
          case "Recorded":
            intent.storeAttempt = r.intent.attempts
            return Effect.succeed<Begin>(local)
          case "TakenOver":
            intent.storeAttempt = r.intent.attempts
            if (r.intent.before !== undefined) {
              // The dead holder recorded the order before its send: prove from it, like a resume,
              // unless a sibling call may have moved the order since (then nothing can prove it).
              const taken = r.intent
              intent.before = taken.before
              intent.unknownSince = taken.createdAt
              intent.lastError = "TakenOver"
              return Effect.map(store.intentsOfOrder(taken.client_orderid), (siblings): Begin => {
                if (siblingMoved(taken, siblings)) intent.beforeLost = true
                return { _tag: "Resume", intent }
              })
            }
            // It promised a snapshot before sending and left none: it never sent. Start afresh.
            if (r.intent.beforeRequired === true) return Effect.succeed<Begin>(local)
            intent.unknownSince = r.intent.createdAt
            intent.lastError = "TakenOver"
            intent.beforeLost = true
            return Effect.succeed<Begin>({ _tag: "Resume", intent })
          case "Conflict":
            return settleWith({ _tag: "KeyReused" })
          case "Finished": {
            const outcome = r.intent.outcome
            if (outcome?._tag === "Returned") return settleWith({ _tag: "Replay", exit: Exit.succeed(outcome.data ?? { status: outcome.status }) })
            // A refusal or a proven "not applied" was recorded: nothing moved, so this call sends,
            // under the same intent re-opened (a crash during this send must stay recoverable).
            // Another caller re-opening it first makes this one join it on the next look.
            return Effect.flatMap(store.reopenIntent(intent.key, { leaseMs }), (reopened) => {
              if (reopened === undefined) return decide(attempt + 1)
              intent.storeAttempt = reopened.attempts
              return Effect.succeed<Begin>(local)
            })
          }
          case "InFlight":
            // Another instance holds it: wait for its outcome or for its lease to run out, within
            // this call's own deadline and signal.
            return Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> => {
              if (bound?.signal?.aborted === true || now >= deadlineAt) return Effect.fail(heldElsewhere())
              const wait = Math.max(1, Math.min(pollMs, r.intent.leaseUntil - now + 1, deadlineAt - now))
              const pause = Effect.sleep(Duration.millis(wait))
              const bounded = bound?.signal === undefined ? pause : Effect.raceFirst(pause, whenAborted(bound.signal, heldElsewhere))
              return Effect.zipRight(bounded, decide(attempt + 1))
            })
        }
      })
    // Interrupted while waiting (an Effect.timeout around the call): the placeholder is closed too.
    return Effect.catchAll(decide(1), abandon).pipe(Effect.onInterrupt(() => memory.finish(intent, Exit.fail(heldElsewhere()), false)))
  }

  const notRecorded = (e: StoreError | StoreInputError, intent: CallIntent) =>
    Effect.logWarning("paykit: could not record an outcome in the store").pipe(Effect.annotateLogs({ error: e._tag, idempotency_key: intent.key }))

  const finish = (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean) =>
    Effect.zipRight(
      memory.finish(intent, exit, unknown),
      unknown ? Effect.void : store.recordOutcome(intent.key, outcomeOf(exit)).pipe(Effect.catchAll((e) => notRecorded(e, intent)))
    )

  // The same `begin` and a success's `finish` without a fiber: the store's writes as Promises (its
  // own, or its Effects run one by one for a service made elsewhere); any answer but `Recorded`
  // goes on as `claim`'s Effect.
  const writes = storeWritesOf(store)
  const recordIntent = writes !== undefined
    ? (input: IntentInput) => writes.recordIntent(input, { leaseMs })
    : (input: IntentInput) => runToPromise(store.recordIntent(input, { leaseMs }))
  // The outcome is taken from the result before the caller gets it (the service's writes prepare
  // it at once; the Effect is handed a copy).
  const recordOutcome = writes !== undefined
    ? (key: string, result: Record<string, unknown>) => writes.recordOutcome(key, returned(result, result as JsonValue))
    : (key: string, result: Record<string, unknown>) => runToPromise(store.recordOutcome(key, returned(result, toJson(result))))
  const sync = memory.sync!
  const promise: PromiseIntentLedger = {
    begin: (key, fingerprint, meta, bound) => {
      const local = sync.begin(key, fingerprint, meta)
      if (local._tag !== "Fresh") return local
      const intent = local.intent
      const startedAt = Date.now()
      return recordIntent(intentInput(intent.key, meta)).then(
        (r) => {
          if (r._tag !== "Recorded") return runToPromise(claim(intent, meta, startedAt, bound, Effect.succeed(r)))
          intent.storeAttempt = r.intent.attempts
          return local
        },
        (e: StoreError | StoreInputError) => {
          const keyed = withIdempotencyKey(e, intent.key)
          sync.finish(intent, Exit.fail(keyed), false)
          throw keyed
        }
      )
    },
    succeed: (intent, result) => {
      sync.finish(intent, Exit.succeed(result), false)
      return recordOutcome(intent.key, result).then(undefined, (e: StoreError | StoreInputError) => Effect.runSync(notRecorded(e, intent)))
    }
  }

  const recordBefore = (intent: CallIntent): Effect.Effect<void, StoreError | StoreInputError> =>
    intent.before === undefined || intent.storeAttempt === undefined
      ? Effect.void
      : Effect.flatMap(store.recordBefore(intent.key, intent.before, { attempt: intent.storeAttempt }), (held) =>
        held
          ? Effect.void
          : Effect.fail(new StoreError({ method: "recordBefore", adapter: store.adapter, reason: "another instance holds this intent now (its lease ran out); nothing was sent" })))

  // Every instance's calls on the order, from the shared store: a callback may reach another
  // instance than the one whose capture or return it reports.
  // An unfinished intent whose lease still holds may have a send out; one whose holder died never
  // learns its serial number (a taker-over reconciles from the order's figures).
  const callsOn = (order: { readonly client_orderid: string; readonly orderid: string }) =>
    Effect.zipWith(store.intentsOfOrder(order.client_orderid), Clock.currentTimeMillis, (intents, now): ReadonlyArray<OrderCall> =>
      intents
        .filter((i) => i.orderid === order.orderid || i.outcome?.orderid === order.orderid)
        .map((i) => ({
          operation: i.operation,
          serialNumber: i.outcome?._tag === "Returned" ? serialNumberOf(i.outcome.data) : undefined,
          running: i.outcome === undefined && i.leaseUntil > now
        })))

  return { begin, finish, recordBefore, callsOn, promise }
}

function intentInput(key: string, meta: IntentMeta): IntentInput {
  return {
    idempotencyKey: key,
    operation: meta.operation,
    client_orderid: meta.client_orderid,
    orderid: meta.orderid,
    amount: meta.amount,
    currency: meta.currency,
    endpoint: meta.endpoint,
    // The pipeline snapshots the order before sending a call on an existing order it can ask
    // status about, and records the snapshot before the send (recordBefore).
    beforeRequired: snapshotsBefore(meta)
  }
}

function snapshotsBefore(meta: IntentMeta): boolean | undefined {
  const op = (preparedOperations as Record<string, { readonly onExistingOrder: boolean } | undefined>)[meta.operation]
  return op?.onExistingOrder === true && meta.client_orderid !== "" ? true : undefined
}

/** Callback claims on a `PayStore` (by the callback's exact text; the store keeps its hash). */
export function storeCallbackClaims(store: PayStoreService): CallbackClaimStore {
  const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)
  return {
    claim: (query, leaseMs) =>
      run(store.claimCallback(query, { leaseMs })).then((c): ClaimResult =>
        c._tag === "Claimed" ? "claimed" : c._tag === "Done" ? "done" : "running-elsewhere"),
    complete: (query) => run(store.completeCallback(query)),
    release: (query) => run(store.releaseCallback(query))
  }
}
