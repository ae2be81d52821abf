/**
 * The idempotency ledger and the callback claims on a shared `PayStore` (memory, PGlite or
 * PostgreSQL), so merchant retries are replays across processes and restarts, and a callback's
 * effect runs once across a fleet.
 *
 * The store owns the protocol; this process's memory is a cache (docs/fleet.md#the-intent-protocol).
 * In-process joins stay in memory (a Deferred is cheaper than polling a database), but a fresh call
 * and a resumed one both ask the store: `recordIntent` before the first send (`Recorded` → send
 * holding fencing token `attempts`; `Finished` → replay a success or a final failure, re-open a
 * failure that moved nothing; `InFlight` → wait for the holder's outcome or lease; `TakenOver` → an
 * earlier holder stopped: prove its sends before any resend; `Conflict` → the key names another
 * request). A call holds its intent for its deadline plus the processing window, and re-checks its
 * token before each resend (`beforeResend`). Its outcome is written with its token (a stale holder's
 * failure is refused); an unknown outcome is not recorded: the intent is released at once with the
 * time its sends ended, for the next call with its key or for `recover()`. Every store step is
 * bounded by the call's deadline. The same decisions are offered as Promises (`promise`) for the pipeline's
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
import * as Fiber from "effect/Fiber"
import { whenAborted } from "../transport/when-aborted"
import { InputError, OutcomeUnknown, withIdempotencyKey, type ReconcileError } from "../errors"
import { failureTag, memoryIntentLedger, serialNumberOf, type Begin, type BeginBound, type CallIntent, type IntentLedger, type IntentMeta, type OrderCall, type PromiseIntentLedger } from "./ledger"
import { recordedFields, reopens, replayedFailure } from "./verdicts"
import { storeOrderLocks } from "./order-leases"
import { preparedOperations } from "../operations/table"
import { siblingMoved } from "./order-siblings"
import { runToPromise } from "../transport/run-promise"
import type { PayStoreService } from "../store/service"
import { StoreError, type IntentInput, type IntentOutcome, type JsonValue, type RecordIntentResult, type StoreInputError } from "../store/types"
import { storeWritesOf } from "../store/writes"

/** How the store-backed ledger holds intents. */
export interface StoreLedgerOptions {
  /** How long a call holds its intent before another instance may take it over (default 120 000 ms). */
  readonly leaseMs?: number | undefined
  /** How often a call waiting on another instance's intent looks again (default 250 ms). */
  readonly pollMs?: number | undefined
}

/** A store step that did not answer within the call's deadline. */
const timedOut = (store: PayStoreService, method: string) =>
  new StoreError({ method, adapter: store.adapter, reason: "no answer within the call's deadline" })

/** `effect` bounded by the absolute time `deadlineAt` (the call's deadline), failing with a StoreError then. */
function withinDeadline<A, E>(store: PayStoreService, method: string, deadlineAt: number | undefined, effect: Effect.Effect<A, E>): Effect.Effect<A, E | StoreError> {
  if (deadlineAt === undefined || !Number.isFinite(deadlineAt)) return effect
  return Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.timeoutFail(effect, { duration: Duration.millis(Math.max(1, deadlineAt - now)), onTimeout: () => timedOut(store, method) }))
}

/** A promise bounded by `ms` (real timers), rejecting with `onTimeout()` then. */
function promiseWithin<A>(promise: Promise<A>, ms: number, onTimeout: () => unknown): Promise<A> {
  if (!Number.isFinite(ms)) return promise
  return new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), Math.max(1, ms))
    promise.then((a) => {
      clearTimeout(timer)
      resolve(a)
    }, (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })
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
  const data = failure === undefined ? undefined : recordedFields(failure)
  return data === undefined ? { _tag: "Failed", errorTag: failureTag(exit) } : { _tag: "Failed", errorTag: failureTag(exit), data }
}

/**
 * How long a call holds its intent: its deadline plus the processing window, and never less than the
 * configured lease, so no other instance takes over a call that may still send or whose send may
 * still land (docs/fleet.md#the-intent-protocol).
 */
const leaseOf = (leaseMs: number, bound: BeginBound | undefined): number =>
  Math.max(leaseMs, Math.ceil((bound?.deadlineMs ?? 0) + (bound?.windowMs ?? 0)))

/** The idempotency ledger over a `PayStore`. */
export function storeIntentLedger(store: PayStoreService, options: StoreLedgerOptions = {}): IntentLedger {
  const memory = memoryIntentLedger()
  const leaseMs = options.leaseMs ?? 120_000
  const pollMs = options.pollMs ?? 250

  const leaseFor = (bound: BeginBound | undefined) => ({
    leaseMs: leaseOf(leaseMs, bound),
    sendsWithinMs: bound === undefined ? undefined : Math.max(0, Math.ceil(bound.deadlineMs))
  })
  const record = (key: string, meta: IntentMeta, bound: BeginBound | undefined, deadlineAt: number | undefined) =>
    withinDeadline(store, "recordIntent", deadlineAt, store.recordIntent(intentInput(key, meta), leaseFor(bound)))

  // A fresh call and a resumed one alike ask the store: this process's memory of an unknown outcome
  // is a cache, and the store may know more (another instance proved it, re-sent it, or holds it).
  const begin = (key: string | undefined, fingerprint: string, meta: IntentMeta, bound?: BeginBound): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> =>
    Effect.flatMap(Effect.zip(memory.begin(key, fingerprint, meta), Clock.currentTimeMillis), ([local, startedAt]) => {
      if (local._tag !== "Fresh" && local._tag !== "Resume") return Effect.succeed(local)
      const deadlineAt = startedAt + (bound?.deadlineMs ?? Number.POSITIVE_INFINITY)
      return claim(local.intent, meta, startedAt, bound, record(local.intent.key, meta, bound, deadlineAt), local._tag === "Resume")
    })

  /**
   * What the store says about a call's fresh local intent, from `first` (the store's first answer,
   * or the Effect that asks for it) on: the intent to send, the replay, the join, the take-over.
   */
  const claim = (
    intent: CallIntent,
    meta: IntentMeta,
    startedAt: number,
    bound: BeginBound | undefined,
    first: Effect.Effect<RecordIntentResult, StoreError | StoreInputError>,
    resumed = false
  ): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> => {
    const deadlineAt = startedAt + (bound?.deadlineMs ?? Number.POSITIVE_INFINITY)
    intent.deadlineAt = deadlineAt
    intent.windowMs = bound?.windowMs
    const local: Begin = { _tag: "Fresh", intent }
    // The local intent resumed an unknown outcome of this process: it stays a resume whatever the store adds.
    const asResume = (): Begin => ({ _tag: "Resume", intent })
    // This call ends without the store's say (it failed, or the caller stopped waiting): the local
    // placeholder is closed with the same failure and forgotten, so a later call with the key (or
    // an identical keyless one) asks the store again instead of joining a call that is over.
    // A resumed intent stays unknown here (its earlier send is still unproven).
    const abandon = <E extends StoreError | StoreInputError | OutcomeUnknown>(e: E): Effect.Effect<never, E> => {
      const keyed = withIdempotencyKey(e, intent.key)
      return Effect.zipRight(memory.finish(intent, Exit.fail(keyed), resumed), Effect.fail(keyed))
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
      Effect.flatMap(attempt === 1 ? first : record(intent.key, meta, bound, deadlineAt), (r): Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown> => {
        switch (r._tag) {
          case "Recorded":
            intent.storeAttempt = r.intent.attempts
            intent.sendsRecorded = true
            return Effect.succeed<Begin>(resumed ? asResume() : local)
          case "TakenOver": {
            intent.storeAttempt = r.intent.attempts
            intent.sendsRecorded = false
            const taken = r.intent
            // The window of the sends made under the key runs from when they ended, as the store
            // has it (this process's own note is kept when later).
            const sendsEnded = taken.sendsEndBy ?? taken.leaseUntil
            // Every send under the key started after the intent was recorded (or re-opened).
            intent.firstSendAt = Math.min(intent.firstSendAt ?? Number.POSITIVE_INFINITY, taken.createdAt)
            if (taken.before !== undefined) {
              // The holder recorded the order before its send: prove from it, like a resume,
              // unless a sibling call may have moved the order since (then nothing can prove it).
              intent.before = taken.before
              intent.unknownSince = Math.max(intent.unknownSince ?? 0, sendsEnded)
              intent.lastError ??= "TakenOver"
              return Effect.map(withinDeadline(store, "intentsOfOrder", deadlineAt, store.intentsOfOrder(taken.client_orderid)), (siblings): Begin => {
                if (siblingMoved(taken, siblings)) intent.beforeLost = true
                return asResume()
              })
            }
            // It promised a snapshot before sending and left none: it never sent. Start afresh.
            if (taken.beforeRequired === true && !resumed) return Effect.succeed<Begin>(local)
            if (taken.beforeRequired === true && intent.before === undefined) {
              intent.unknownSince = undefined
              return Effect.succeed<Begin>(local)
            }
            intent.unknownSince = Math.max(intent.unknownSince ?? 0, sendsEnded)
            intent.lastError ??= "TakenOver"
            if (!resumed) intent.beforeLost = true
            return Effect.succeed<Begin>(asResume())
          }
          case "Conflict":
            return settleWith({ _tag: "KeyReused" })
          case "Finished": {
            const outcome = r.intent.outcome
            if (outcome?._tag === "Returned") return settleWith({ _tag: "Replay", exit: Exit.succeed(outcome.data ?? { status: outcome.status }) })
            if (outcome !== undefined && !reopens(outcome.errorTag)) {
              // A final failure (a conflict found after a send): money may have moved; it replays.
              return settleWith({ _tag: "Replay", exit: Exit.fail(replayedFailure(outcome.errorTag, outcome.data, { operation: meta.method, client_orderid: meta.client_orderid, orderid: meta.orderid, idempotencyKey: intent.key })) })
            }
            // A refusal or a proven "not applied" was recorded: nothing moved, so this call sends,
            // under the same intent re-opened (a crash during this send must stay recoverable).
            // Another caller re-opening it first makes this one join it on the next look.
            return Effect.flatMap(withinDeadline(store, "reopenIntent", deadlineAt, store.reopenIntent(intent.key, leaseFor(bound))), (reopened) => {
              if (reopened === undefined) return decide(attempt + 1)
              intent.storeAttempt = reopened.attempts
              intent.sendsRecorded = true
              // Proven: nothing this key sent before moved money. A fresh send, snapshot first.
              intent.before = undefined
              intent.unknownSince = undefined
              intent.lastError = undefined
              intent.beforeLost = undefined
              intent.beforeMixed = undefined
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
    return Effect.catchAll(decide(1), abandon).pipe(Effect.onInterrupt(() => memory.finish(intent, Exit.fail(heldElsewhere()), resumed)))
  }

  const notRecorded = (e: StoreError | StoreInputError, intent: CallIntent) =>
    Effect.logWarning("paykit: could not record an outcome in the store").pipe(Effect.annotateLogs({ error: e._tag, idempotency_key: intent.key }))

  const stale = (intent: CallIntent) =>
    Effect.logError("paykit: the store refused this call's outcome: another instance took its intent over (its lease ran out while it ran)").pipe(
      Effect.annotateLogs({ idempotency_key: intent.key }))

  // The outcome written with the call's fencing token; an unknown one releases the intent at once
  // (its sends have all ended), so the next call with the key proves it without waiting for the lease.
  const write = (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean): Effect.Effect<void> => {
    const holder = intent.storeAttempt === undefined ? undefined : { attempt: intent.storeAttempt }
    if (unknown) {
      return holder === undefined ? Effect.void : Effect.asVoid(store.releaseIntent(intent.key, holder)).pipe(Effect.catchAll((e) => notRecorded(e, intent)))
    }
    return store.recordOutcome(intent.key, outcomeOf(exit), holder).pipe(
      Effect.flatMap((r) => (r._tag === "Stale" ? stale(intent) : Effect.void)),
      Effect.catchAll((e) => notRecorded(e, intent))
    )
  }

  // The caller is answered by its deadline even when the store is slow: the write goes on in the
  // background (a slow or lost write leaves the intent to the next call with its key or `recover()`).
  const finish = (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean) =>
    Effect.zipRight(
      memory.finish(intent, exit, unknown),
      Effect.flatMap(Effect.forkDaemon(write(intent, exit, unknown)), (fiber) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const left = (intent.deadlineAt ?? Number.POSITIVE_INFINITY) - now
          // Interruptible even where `finish` runs as an interruption's finalizer: the wait may be
          // cut short (the write goes on in its own fiber), never the caller's answer held up.
          return Effect.interruptible(
            Number.isFinite(left) ? Effect.ignore(Effect.timeout(Fiber.join(fiber), Duration.millis(Math.max(1, left)))) : Fiber.join(fiber)
          )
        }))
    )

  // The same `begin` and a success's `finish` without a fiber: the store's writes as Promises (its
  // own, or its Effects run one by one for a service made elsewhere); any answer but `Recorded`
  // goes on as `claim`'s Effect.
  const writes = storeWritesOf(store)
  const recordIntent = writes !== undefined
    ? (input: IntentInput, bound: BeginBound) => writes.recordIntent(input, leaseFor(bound))
    : (input: IntentInput, bound: BeginBound) => runToPromise(store.recordIntent(input, leaseFor(bound)))
  // The outcome is taken from the result before the caller gets it (the service's writes prepare
  // it at once; the Effect is handed a copy).
  const recordOutcome = writes !== undefined
    ? (key: string, result: Record<string, unknown>, attempt: number | undefined) => writes.recordOutcome(key, returned(result, result as JsonValue), attempt)
    : (key: string, result: Record<string, unknown>, attempt: number | undefined) =>
      runToPromise(store.recordOutcome(key, returned(result, toJson(result)), attempt === undefined ? undefined : { attempt })).then((r) => r._tag)
  const sync = memory.sync!
  const promise: PromiseIntentLedger = {
    begin: (key, fingerprint, meta, bound) => {
      const local = sync.begin(key, fingerprint, meta)
      if (local._tag !== "Fresh" && local._tag !== "Resume") return local
      const intent = local.intent
      const startedAt = Date.now()
      intent.deadlineAt = startedAt + bound.deadlineMs
      intent.windowMs = bound.windowMs
      // A resume asks the store first, as `begin` does: this process's memory is a cache.
      if (local._tag === "Resume") return runToPromise(claim(intent, meta, startedAt, bound, record(intent.key, meta, bound, intent.deadlineAt), true))
      return promiseWithin(recordIntent(intentInput(intent.key, meta), bound), bound.deadlineMs, () => timedOut(store, "recordIntent")).then(
        (r) => {
          if (r._tag !== "Recorded") return runToPromise(claim(intent, meta, startedAt, bound, Effect.succeed(r)))
          intent.storeAttempt = r.intent.attempts
          intent.sendsRecorded = true
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
      const written = recordOutcome(intent.key, result, intent.storeAttempt).then(
        (r) => (r === "Stale" ? Effect.runSync(stale(intent)) : undefined),
        (e: StoreError | StoreInputError) => Effect.runSync(notRecorded(e, intent))
      )
      // Answered by the deadline whatever the store does: the write goes on behind.
      const left = (intent.deadlineAt ?? Number.POSITIVE_INFINITY) - Date.now()
      return promiseWithin(written, left, () => undefined).catch(() => undefined)
    }
  }

  const recordBefore = (intent: CallIntent): Effect.Effect<void, StoreError | StoreInputError> =>
    intent.before === undefined || intent.storeAttempt === undefined
      ? Effect.void
      : Effect.flatMap(withinDeadline(store, "recordBefore", intent.deadlineAt, store.recordBefore(intent.key, intent.before, { attempt: intent.storeAttempt })), (held) =>
        held
          ? Effect.void
          : Effect.fail(new StoreError({ method: "recordBefore", adapter: store.adapter, reason: "another instance holds this intent now (its lease ran out); nothing was sent" })))

  // Before a resend: the call still holds its intent (its token is current), and the store knows
  // until when this send may end. `false`: another instance holds it now, so nothing is sent.
  const beforeResend = (intent: CallIntent): Effect.Effect<boolean, StoreError | StoreInputError> =>
    intent.storeAttempt === undefined
      ? Effect.succeed(true)
      : Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const left = Math.max(0, Math.ceil((intent.deadlineAt ?? now) - now))
        return withinDeadline(store, "extendIntentLease", intent.deadlineAt, store.extendIntentLease(intent.key, { leaseMs: Math.max(1, left + (intent.windowMs ?? 0)), sendsWithinMs: left }, { attempt: intent.storeAttempt! }))
      })

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

  return { begin, finish, recordBefore, beforeResend, callsOn, promise, orders: storeOrderLocks(store, memory.orders) }
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
