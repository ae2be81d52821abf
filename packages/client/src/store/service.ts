/**
 * The `PayStore` service: where payment intents, callback claims and OAuth nonces live, so a fleet
 * of merchant instances (or one process across restarts) shares them. One service over three
 * adapters (memory, PGlite, PostgreSQL) with the same semantics; this module checks every input,
 * sanitises outcomes, hashes callback queries and reads the time from Effect's `Clock` before an
 * adapter sees anything.
 *
 * @packageDocumentation
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { toStoreError, type AdapterName, type StoreBackend } from "./backend"
import { sha256Hex } from "./hash"
import { checkClaim, checkKey, checkRecordIntent, noRecordedIntent, prepareBefore, prepareRecordOutcome } from "./rules"
import { copyIntent, makeStoreWrites, registerStoreWrites, storeWritesOf } from "./writes"
import {
  StoreError,
  StoreInputError,
  type BeforeSnapshot,
  type CallbackClaim,
  type CallbackCompletion,
  type Intent,
  type IntentInput,
  type IntentOutcome,
  type LeaseOptions,
  type MigrationRecord,
  type OrderLeaseResult,
  type PurgeReport,
  type RecordIntentResult,
  type RecordOutcomeResult
} from "./types"

export type { LeaseOptions }

/** What `unfinished` claims. */
export interface UnfinishedOptions extends LeaseOptions {
  /** Only intents at least this old (ms; default 0). A live caller's intent is also skipped by its lease. */
  readonly olderThanMs?: number | undefined
  /** At most this many per call (default 100). */
  readonly limit?: number | undefined
}

/** The store's operations, as Effects. */
export interface PayStoreService {
  /** The adapter behind the service. */
  readonly adapter: AdapterName
  /** This instance's default owner name (random per store object; pass your own to name instances). */
  readonly instanceId: string
  /**
   * Records a money-moving call's intent before its first send, or answers what is already
   * recorded under its idempotency key: a claim-or-get decided atomically by the database (see
   * {@link RecordIntentResult}). The caller holds a recorded or taken-over intent for `leaseMs`.
   */
  readonly recordIntent: (intent: IntentInput, lease: LeaseOptions) => Effect.Effect<RecordIntentResult, StoreError | StoreInputError>
  /**
   * Records the final outcome of an intent (see {@link RecordOutcomeResult}): the first outcome
   * wins, except that a success replaces a recorded failure; with `holder`, a failure is written
   * only while the writer still holds the intent as `holder.attempt` (its fencing token), else `Stale`.
   */
  readonly recordOutcome: (idempotencyKey: string, outcome: IntentOutcome, holder?: { readonly attempt: number }) => Effect.Effect<RecordOutcomeResult, StoreError | StoreInputError>
  /** The intent under an idempotency key, or `undefined`. */
  readonly findByKey: (idempotencyKey: string) => Effect.Effect<Intent | undefined, StoreError | StoreInputError>
  /**
   * The intents recorded for one `client_orderid` (every state), oldest first, at most `limit`
   * (default 1000): the callback handler reads the `serial-number`s of the order's captures and
   * returns from their outcomes, to prove a callback by one specific transaction.
   */
  readonly intentsOfOrder: (clientOrderId: string, options?: { readonly limit?: number | undefined }) => Effect.Effect<ReadonlyArray<Intent>, StoreError | StoreInputError>
  /**
   * Waits for the intent under a key to settle, for a caller that got `InFlight` and joins the call:
   * polls `findByKey` every `pollMs` (default 100, on Effect's `Clock`) until the intent has an
   * outcome, its holder's lease has run out (then `recordIntent` again answers `TakenOver`), or it
   * is gone; returns the intent as last read (`undefined` when gone).
   */
  readonly awaitIntent: (idempotencyKey: string, options?: { readonly pollMs?: number | undefined }) => Effect.Effect<Intent | undefined, StoreError | StoreInputError>
  /**
   * Re-opens an intent whose recorded outcome is a failure (a refusal, or proven not applied: nothing
   * moved) so a new send under the same key is tracked like the first: the outcome and the snapshot
   * are cleared, `createdAt` restarts, and the caller holds it for `leaseMs` (`attempts` + 1).
   * `undefined` when it is not (any more) finished with a failure: someone else re-opened it first.
   */
  readonly reopenIntent: (idempotencyKey: string, lease: LeaseOptions) => Effect.Effect<Intent | undefined, StoreError | StoreInputError>
  /**
   * Records the order as it was before the first send of a call on an existing order (its status
   * reply, reduced to a {@link BeforeSnapshot}: figures only, no card data), on an unfinished intent
   * the caller still holds as `holder.attempt` (the `attempts` of the intent `recordIntent` gave it).
   * `false` when the caller no longer holds it (taken over, claimed by `recover()`, finished): it must
   * not send then. Call it after `recordIntent` with `beforeRequired: true` and before sending.
   */
  readonly recordBefore: (idempotencyKey: string, before: unknown, holder: { readonly attempt: number; readonly owner?: string | undefined }) => Effect.Effect<boolean, StoreError | StoreInputError>
  /**
   * Extends the lease of an unfinished intent the owner still holds (as `holder.attempt`, its fencing
   * token, when given) to at least `leaseMs` from now, and records `sendsWithinMs` (when given) as the
   * moment its next sends end by: a holder calls it before it sends again. `false` when it does not
   * hold the intent any more: it must not send then.
   */
  readonly extendIntentLease: (idempotencyKey: string, lease: LeaseOptions, holder?: { readonly attempt: number }) => Effect.Effect<boolean, StoreError | StoreInputError>
  /**
   * Gives up the lease of an unfinished intent held as `holder.attempt` at once, its outcome still
   * unknown, and records that its sends have ended by now: the next call with its key (or
   * `recover()`) takes it over and proves what happened (the processing window running from now)
   * before anything is sent again. Only a holder whose sends are over calls it. `false` when it is
   * not held so.
   */
  readonly releaseIntent: (idempotencyKey: string, holder: { readonly attempt: number }) => Effect.Effect<boolean, StoreError | StoreInputError>
  /**
   * Takes the lease of the order `orderid` for the call under `holder.idempotencyKey` (one
   * statement; docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet): `Taken` when no live lease is held or this call
   * holds it already, else `Held` with the holder's lease end.
   */
  readonly takeOrderLease: (orderid: string, holder: { readonly idempotencyKey: string; readonly leaseMs: number; readonly owner?: string | undefined }) => Effect.Effect<OrderLeaseResult, StoreError | StoreInputError>
  /** Ends the order's lease if the call under `idempotencyKey` holds it as `token`; `false` otherwise. */
  readonly releaseOrderLease: (orderid: string, holder: { readonly idempotencyKey: string; readonly token: number }) => Effect.Effect<boolean, StoreError | StoreInputError>
  /**
   * Claims unfinished intents (no outcome, lease run out, older than `olderThanMs`), oldest first,
   * for `recover()`: each returned intent is held by the claimer for `leaseMs`, and concurrent
   * claimers (on any instance) get disjoint sets (`FOR UPDATE SKIP LOCKED`).
   */
  readonly unfinished: (options: UnfinishedOptions) => Effect.Effect<ReadonlyArray<Intent>, StoreError | StoreInputError>
  /**
   * Claims a callback before the merchant's handler runs. `query` is the callback's exact query
   * string as received (GET; a leading `?` is ignored) or its form body (POST): a redelivery is the
   * same bytes (docs/decisions.md#11-callbacks). Only its SHA-256 is stored.
   */
  readonly claimCallback: (query: string, lease: LeaseOptions) => Effect.Effect<CallbackClaim, StoreError | StoreInputError>
  /** Marks a claimed callback's effect done; from then on every claim answers `Done`. */
  readonly completeCallback: (query: string) => Effect.Effect<CallbackCompletion, StoreError | StoreInputError>
  /** Gives up the owner's live claim at once (the handler failed), so the gateway's retry can claim it. */
  readonly releaseCallback: (query: string, owner?: string) => Effect.Effect<boolean, StoreError | StoreInputError>
  /** The OAuth `NonceStore.remember` check-and-set, shared by the fleet (times in epoch seconds). */
  readonly rememberNonce: (consumerKey: string, nonce: string, expiresAt: number, now: number) => Effect.Effect<boolean, StoreError | StoreInputError>
  /**
   * Deletes finished intents and completed callback claims older than `olderThanMs`, and expired
   * nonces. Keep callbacks for as long as the gateway may redeliver (the real one: 14 days).
   */
  readonly purge: (olderThanMs: number) => Effect.Effect<PurgeReport, StoreError | StoreInputError>
  /** Applies pending migrations (idempotent; the layers run it at start unless told not to). */
  readonly migrate: Effect.Effect<ReadonlyArray<MigrationRecord>, StoreError>
}

/** The store as an Effect service. */
export class PayStore extends Context.Tag("@paykit/client/PayStore")<PayStore, PayStoreService>() {}

/** Options of every store constructor. */
export interface StoreOptions {
  /** This instance's name as an owner of leases (default: a random id). */
  readonly instanceId?: string | undefined
  /** Apply pending migrations when the store opens (default `true`). */
  readonly migrate?: boolean | undefined
}

/** A store for the Promise world: the service plus `close()` (for `createPayClient({ store })`). */
export interface PayStoreHandle extends PayStoreService {
  /** Closes what the store opened (a PGlite database, a pool it created); idempotent. */
  readonly close: () => Promise<void>
}

// A fencing token, when given, is what `recordIntent` answered as the intent's `attempts`.
function checkAttempt(method: string, attempt: number | undefined): StoreInputError | undefined {
  return attempt === undefined || (Number.isSafeInteger(attempt) && attempt >= 1)
    ? undefined
    : new StoreInputError({ method, field: "attempt", rule: "must be a positive integer (the intent's attempts when it was taken)" })
}

function checkSendsWithin(method: string, lease: LeaseOptions): StoreInputError | undefined {
  const ms = lease.sendsWithinMs
  return ms === undefined || (Number.isSafeInteger(ms) && ms >= 0)
    ? undefined
    : new StoreInputError({ method, field: "sendsWithinMs", rule: "must be a non-negative integer of milliseconds" })
}

/** The hash under which a callback is claimed: SHA-256 of its exact query (a leading `?` ignored). */
export function callbackQueryHash(query: string): Promise<string> {
  return sha256Hex(query.startsWith("?") ? query.slice(1) : query)
}

/**
 * Builds the service over a backend.
 *
 * @throws StoreInputError when `options.instanceId` is empty or longer than 200 characters.
 */
export function makePayStore(backend: StoreBackend, options: StoreOptions = {}): PayStoreService {
  const adapter = backend.adapter
  const instanceId = options.instanceId ?? `paykit-${globalThis.crypto.randomUUID()}`
  const bad = checkKey("store", "instanceId", instanceId, 200)
  if (bad !== undefined) throw bad

  const run = <A>(method: string, f: () => Promise<A>): Effect.Effect<A, StoreError> =>
    Effect.tryPromise({ try: f, catch: (e) => toStoreError(adapter, method, e) }).pipe(
      Effect.withSpan(`paykit.store.${method}`, { attributes: { adapter }, captureStackTrace: false })
    )
  const guard = <A>(check: StoreInputError | undefined, body: () => Effect.Effect<A, StoreError | StoreInputError>) =>
    check === undefined ? Effect.suspend(body) : Effect.fail(check)
  const hashOf = (method: string, query: string) =>
    guard(checkKey(method, "query", query, 64 * 1024), () =>
      Effect.tryPromise({ try: () => callbackQueryHash(query), catch: (e) => toStoreError(adapter, method, e) }))

  const service: PayStoreService = {
    adapter,
    instanceId,
    recordIntent: (intent, lease) => {
      const owner = lease.owner ?? instanceId
      return guard(checkRecordIntent(intent, lease.leaseMs, owner) ?? checkSendsWithin("recordIntent", lease), () =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          run("recordIntent", () => backend.recordIntent(copyIntent(intent), owner, now, lease.leaseMs, now + (lease.sendsWithinMs ?? lease.leaseMs)))))
    },
    recordOutcome: (key, outcome, holder) => {
      const prepared = prepareRecordOutcome(key, outcome)
      return guard(prepared instanceof StoreInputError ? prepared : checkAttempt("recordOutcome", holder?.attempt), () =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.flatMap(run("recordOutcome", () => backend.recordOutcome(key, prepared as IntentOutcome, now, holder?.attempt)), (result) =>
            result === undefined ? Effect.fail(noRecordedIntent()) : Effect.succeed(result))))
    },
    findByKey: (key) => guard(checkKey("findByKey", "idempotencyKey", key), () => run("findByKey", () => backend.findByKey(key))),
    intentsOfOrder: (clientOrderId, opts = {}) => {
      const limit = opts.limit ?? 1000
      return guard(
        checkKey("intentsOfOrder", "client_orderid", clientOrderId) ??
          (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000 ? new StoreInputError({ method: "intentsOfOrder", field: "limit", rule: "must be an integer from 1 to 10000" }) : undefined),
        () => run("intentsOfOrder", () => backend.intentsOfOrder(clientOrderId, limit))
      )
    },
    awaitIntent: (key, opts = {}) => {
      const pollMs = opts.pollMs ?? 100
      const poll: Effect.Effect<Intent | undefined, StoreError> = Effect.flatMap(
        Effect.zip(run("findByKey", () => backend.findByKey(key)), Clock.currentTimeMillis),
        ([intent, now]) =>
          intent === undefined || intent.outcome !== undefined || intent.leaseUntil <= now
            ? Effect.succeed(intent)
            // Wake no later than the lease's end, when the caller may take the intent over.
            : Effect.zipRight(Effect.sleep(Duration.millis(Math.min(pollMs, intent.leaseUntil - now))), Effect.suspend(() => poll))
      )
      return guard(
        checkKey("awaitIntent", "idempotencyKey", key) ??
          (!Number.isSafeInteger(pollMs) || pollMs < 1 ? new StoreInputError({ method: "awaitIntent", field: "pollMs", rule: "must be a positive integer of milliseconds" }) : undefined),
        () => poll
      )
    },
    reopenIntent: (key, lease) => {
      const owner = lease.owner ?? instanceId
      return guard(checkKey("reopenIntent", "idempotencyKey", key) ?? checkClaim("reopenIntent", lease.leaseMs, owner) ?? checkSendsWithin("reopenIntent", lease), () =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          run("reopenIntent", () => backend.reopenIntent(key, owner, now, lease.leaseMs, now + (lease.sendsWithinMs ?? lease.leaseMs)))))
    },
    recordBefore: (key, before, holder) => {
      const owner = holder.owner ?? instanceId
      const prepared = prepareBefore(before)
      return guard(
        checkKey("recordBefore", "idempotencyKey", key) ?? checkKey("recordBefore", "owner", owner, 200) ??
          (!Number.isSafeInteger(holder.attempt) || holder.attempt < 1 ? new StoreInputError({ method: "recordBefore", field: "attempt", rule: "must be a positive integer (the intent's attempts)" }) : undefined) ??
          (prepared instanceof StoreInputError ? prepared : undefined),
        () => run("recordBefore", () => backend.recordBefore(key, owner, holder.attempt, prepared as BeforeSnapshot))
      )
    },
    extendIntentLease: (key, lease, holder) => {
      const owner = lease.owner ?? instanceId
      return guard(
        checkKey("extendIntentLease", "idempotencyKey", key) ?? checkClaim("extendIntentLease", lease.leaseMs, owner) ??
          checkSendsWithin("extendIntentLease", lease) ?? checkAttempt("extendIntentLease", holder?.attempt),
        () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            run("extendIntentLease", () =>
              backend.extendIntentLease(key, owner, now, lease.leaseMs, holder?.attempt, lease.sendsWithinMs === undefined ? undefined : now + lease.sendsWithinMs)))
      )
    },
    releaseIntent: (key, holder) =>
      guard(checkKey("releaseIntent", "idempotencyKey", key) ?? checkAttempt("releaseIntent", holder.attempt) ?? (holder.attempt === undefined ? new StoreInputError({ method: "releaseIntent", field: "attempt", rule: "is required" }) : undefined), () =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => run("releaseIntent", () => backend.releaseIntent(key, holder.attempt, now)))),
    takeOrderLease: (orderid, holder) => {
      const owner = holder.owner ?? instanceId
      return guard(
        checkKey("takeOrderLease", "orderid", orderid, 64) ?? checkKey("takeOrderLease", "idempotencyKey", holder.idempotencyKey) ?? checkClaim("takeOrderLease", holder.leaseMs, owner),
        () => Effect.flatMap(Clock.currentTimeMillis, (now) => run("takeOrderLease", () => backend.takeOrderLease(orderid, holder.idempotencyKey, owner, now, holder.leaseMs)))
      )
    },
    releaseOrderLease: (orderid, holder) =>
      guard(
        checkKey("releaseOrderLease", "orderid", orderid, 64) ?? checkKey("releaseOrderLease", "idempotencyKey", holder.idempotencyKey) ??
          (!Number.isSafeInteger(holder.token) || holder.token < 1 ? new StoreInputError({ method: "releaseOrderLease", field: "token", rule: "must be a positive integer (the token takeOrderLease gave)" }) : undefined),
        () => Effect.flatMap(Clock.currentTimeMillis, (now) => run("releaseOrderLease", () => backend.releaseOrderLease(orderid, holder.idempotencyKey, holder.token, now)))
      ),
    unfinished: (opts) => {
      const owner = opts.owner ?? instanceId
      const olderThanMs = opts.olderThanMs ?? 0
      const limit = opts.limit ?? 100
      const check = checkClaim("unfinished", opts.leaseMs, owner)
        ?? (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0
          ? new StoreInputError({ method: "unfinished", field: "olderThanMs", rule: "must be a non-negative integer of milliseconds" })
          : undefined)
        ?? (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000
          ? new StoreInputError({ method: "unfinished", field: "limit", rule: "must be an integer from 1 to 10000" })
          : undefined)
      return guard(check, () =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          run("unfinished", () =>
            backend.unfinished({ createdAtOrBefore: now - olderThanMs, owner, now, leaseMs: opts.leaseMs, limit }))))
    },
    claimCallback: (query, lease) => {
      const owner = lease.owner ?? instanceId
      return guard(checkClaim("claimCallback", lease.leaseMs, owner), () =>
        Effect.flatMap(hashOf("claimCallback", query), (hash) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            run("claimCallback", () => backend.claimCallback(hash, owner, now, lease.leaseMs)))))
    },
    completeCallback: (query) =>
      Effect.flatMap(hashOf("completeCallback", query), (hash) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => run("completeCallback", () => backend.completeCallback(hash, now)))),
    releaseCallback: (query, owner = instanceId) =>
      guard(checkKey("releaseCallback", "owner", owner, 200), () =>
        Effect.flatMap(hashOf("releaseCallback", query), (hash) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => run("releaseCallback", () => backend.releaseCallback(hash, owner, now))))),
    rememberNonce: (consumerKey, nonce, expiresAt, now) =>
      guard(
        checkKey("rememberNonce", "consumerKey", consumerKey) ?? checkKey("rememberNonce", "nonce", nonce)
          ?? (!Number.isSafeInteger(expiresAt) || !Number.isSafeInteger(now)
            ? new StoreInputError({ method: "rememberNonce", field: "expiresAt", rule: "expiresAt and now must be integers of epoch seconds" })
            : undefined),
        () => run("rememberNonce", () => backend.rememberNonce(consumerKey, nonce, expiresAt, now))
      ),
    purge: (olderThanMs) =>
      guard(
        !Number.isSafeInteger(olderThanMs) || olderThanMs < 0
          ? new StoreInputError({ method: "purge", field: "olderThanMs", rule: "must be a non-negative integer of milliseconds" })
          : undefined,
        () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            run("purge", () => backend.purge(now - olderThanMs, Math.floor(now / 1000))))
      ),
    migrate: Effect.suspend(() => run("migrate", () => backend.migrate()))
  }
  // The same two writes as Promises, for the client's fiber-free money calls (see writes.ts).
  registerStoreWrites(service, makeStoreWrites(backend, instanceId))
  return service
}

/**
 * Opens a backend, applies migrations (unless `options.migrate === false`) and builds the service;
 * the backend is closed when the scope closes.
 */
export function acquireStore(
  open: Effect.Effect<StoreBackend, StoreError>,
  options: StoreOptions = {}
): Effect.Effect<PayStoreService, StoreError, Scope.Scope> {
  return Effect.acquireRelease(open, (backend) => Effect.promise(() => backend.close().catch(() => undefined))).pipe(
    Effect.flatMap((backend) =>
      Effect.try({ try: () => makePayStore(backend, options), catch: (e) => toStoreError(backend.adapter, "open", e) })
    ),
    Effect.tap((service) => (options.migrate === false ? Effect.void : service.migrate))
  )
}

/** A scoped layer over a backend (closed with the layer). */
export function storeLayer(open: Effect.Effect<StoreBackend, StoreError>, options: StoreOptions = {}): Layer.Layer<PayStore, StoreError> {
  return Layer.scoped(PayStore, acquireStore(open, options))
}

/** Opens a store for the Promise world: migrated (unless told not to), with `close()`. */
export async function openStore(open: () => Promise<StoreBackend>, adapter: AdapterName, options: StoreOptions = {}): Promise<PayStoreHandle> {
  let backend: StoreBackend
  try {
    backend = await open()
  } catch (e) {
    throw toStoreError(adapter, "open", e)
  }
  let closed: Promise<void> | undefined
  const close = () => (closed ??= backend.close().catch(() => undefined))
  try {
    const service = makePayStore(backend, options)
    if (options.migrate !== false) await Effect.runPromise(Effect.either(service.migrate)).then((r) => {
      if (r._tag === "Left") throw r.left
    })
    const handle: PayStoreHandle = { ...service, close }
    registerStoreWrites(handle, storeWritesOf(service))
    return handle
  } catch (e) {
    await close()
    throw e
  }
}
