/**
 * The contract every adapter implements. The service in `service.ts` validates, sanitises, hashes
 * callback queries and reads the clock before it calls a backend, so a backend only sees checked
 * values, hashes and times. Each method is atomic on its own: one SQL statement (or one
 * transaction), or one synchronous step of the memory adapter.
 *
 * @packageDocumentation
 */
import { maskPans } from "./sanitize"
import {
  StoreError,
  type BeforeSnapshot,
  type CallbackClaim,
  type CallbackCompletion,
  type Intent,
  type IntentInput,
  type IntentOutcome,
  type MigrationRecord,
  type OrderLeaseResult,
  type PurgeReport,
  type RecordIntentResult,
  type RecordOutcomeResult
} from "./types"

/** Names of the adapters. */
export type AdapterName = "memory" | "pglite" | "postgres"

/** Which unfinished intents to claim, and for whom. */
export interface UnfinishedQuery {
  /** Only intents created at or before this time (epoch ms). */
  readonly createdAtOrBefore: number
  /** The claiming instance. */
  readonly owner: string
  /** Now (epoch ms): only intents whose lease has run out by now are claimed. */
  readonly now: number
  /** The claim's length (ms). */
  readonly leaseMs: number
  /** At most this many. */
  readonly limit: number
}

/** An adapter: the semantics of the store over one kind of storage. */
export interface StoreBackend {
  /** Which adapter this is. */
  readonly adapter: AdapterName
  /**
   * Claim-or-get on the idempotency key (see `RecordIntentResult`). A recorded intent's
   * `sendsEndBy` is `sendsEndBy` (the caller's deadline); a take-over keeps the one recorded.
   */
  readonly recordIntent: (input: IntentInput, owner: string, now: number, leaseMs: number, sendsEndBy: number) => Promise<RecordIntentResult>
  /**
   * Records an outcome (see `RecordOutcomeResult`): a success unless a success stands; a failure on
   * an unfinished intent whose `attempts` is `attempt` (any, when `undefined`). `undefined` when no
   * intent has this key.
   */
  readonly recordOutcome: (key: string, outcome: IntentOutcome, now: number, attempt: number | undefined) => Promise<RecordOutcomeResult | undefined>
  /**
   * `recordOutcome` without reading the intent back (a money call's path needs only to know the
   * outcome is stored): `AlreadyFinished` when an earlier outcome stands, `Stale` when the writer
   * lost the intent, `undefined` when no intent has this key.
   */
  readonly writeOutcome: (key: string, outcome: IntentOutcome, now: number, attempt: number | undefined) => Promise<"Recorded" | "AlreadyFinished" | "Stale" | undefined>
  /** The intent under this key. */
  readonly findByKey: (key: string) => Promise<Intent | undefined>
  /** The intents recorded for a `client_orderid`, oldest first, at most `limit`. */
  readonly intentsOfOrder: (clientOrderId: string, limit: number) => Promise<ReadonlyArray<Intent>>
  /**
   * Re-opens an intent finished with a `Failed` outcome (nothing moved) for a new send under the same
   * key: clears the outcome and the snapshot, restarts `createdAt`, hands it to `owner` (attempts + 1).
   * `undefined` when the intent is not finished with `Failed` (any more): another caller re-opened it.
   */
  readonly reopenIntent: (key: string, owner: string, now: number, leaseMs: number, sendsEndBy: number) => Promise<Intent | undefined>
  /**
   * Records the order before the first send on an unfinished intent that `owner` still holds as its
   * `attempt` (the intent's `attempts` when it was recorded or taken over: a fencing token, so a
   * holder that lost the intent cannot write); `false` when it does not hold it.
   */
  readonly recordBefore: (key: string, owner: string, attempt: number, before: BeforeSnapshot) => Promise<boolean>
  /**
   * Moves an unfinished intent's lease end to `now + leaseMs` (never earlier than it is) if `owner`
   * still holds it, as `attempt` when given; raises `sendsEndBy` to the given moment when given (a
   * holder about to send again).
   */
  readonly extendIntentLease: (key: string, owner: string, now: number, leaseMs: number, attempt: number | undefined, sendsEndBy: number | undefined) => Promise<boolean>
  /** Ends the lease of an unfinished intent held as `attempt` at `now` (its outcome stays unknown); `false` when not held so. */
  readonly releaseIntent: (key: string, attempt: number, now: number) => Promise<boolean>
  /**
   * Takes the lease of `orderid` for the call `holderKey` (one statement): when no live lease is
   * held, or when `holderKey` holds it (a resumed call re-enters its own order).
   */
  readonly takeOrderLease: (orderid: string, holderKey: string, owner: string, now: number, leaseMs: number) => Promise<OrderLeaseResult>
  /** Ends the lease of `orderid` if the call `holderKey` holds it as `token`. */
  readonly releaseOrderLease: (orderid: string, holderKey: string, token: number, now: number) => Promise<boolean>
  /** Claims unfinished intents whose lease has run out; disjoint between concurrent claimers. */
  readonly unfinished: (query: UnfinishedQuery) => Promise<ReadonlyArray<Intent>>
  /** Claims a callback by the SHA-256 (hex) of its query. */
  readonly claimCallback: (hash: string, owner: string, now: number, leaseMs: number) => Promise<CallbackClaim>
  /** Marks a claimed callback done, for good. */
  readonly completeCallback: (hash: string, now: number) => Promise<CallbackCompletion>
  /** Ends `owner`'s live lease at once (its handler failed), so the next delivery can claim it. */
  readonly releaseCallback: (hash: string, owner: string, now: number) => Promise<boolean>
  /** The `NonceStore.remember` check-and-set (epoch seconds). */
  readonly rememberNonce: (consumerKey: string, nonce: string, expiresAt: number, nowSeconds: number) => Promise<boolean>
  /** Deletes finished intents and completed callbacks from before `before` (ms), and expired nonces. */
  readonly purge: (before: number, nowSeconds: number) => Promise<PurgeReport>
  /** Applies the schema's migrations that are not applied yet (idempotent). */
  readonly migrate: () => Promise<ReadonlyArray<MigrationRecord>>
  /** Releases the connection(s) the backend opened itself. */
  readonly close: () => Promise<void>
}

// A URL with credentials (`postgres://user:secret@host`) must never reach an error message.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi

/** Wraps whatever a backend threw into a {@link StoreError} without values or credentials. */
export function toStoreError(adapter: string, method: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error
  const e = error as { code?: unknown; message?: unknown } | null
  const code = e !== null && typeof e === "object" && typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined
  const raw = e !== null && typeof e === "object" && typeof e.message === "string" ? e.message : String(error)
  const reason = maskPans(raw.replace(URL_CREDENTIALS, "$1***@")).slice(0, 300)
  return new StoreError({ method, adapter, code, reason })
}
