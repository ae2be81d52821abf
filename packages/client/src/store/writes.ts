/**
 * A money call's two store writes as plain Promises: its intent before the first send and its
 * outcome after. The client's Promise-native first attempt (`call/pipeline.ts`) runs them
 * without an Effect fiber; everything else about a store stays the service's Effects.
 *
 * The checks, the sanitising and the backend methods are the service's own. The time is
 * `Date.now()`: the clock of Effect's default services, which the Promise client runs on. No span
 * is opened: the Promise client runs under Effect's native tracer, whose spans reach no exporter.
 *
 * @packageDocumentation
 */
import { toStoreError, type StoreBackend } from "./backend"
import { checkRecordIntent, noRecordedIntent, prepareRecordOutcome } from "./rules"
import { StoreInputError, type IntentInput, type IntentOutcome, type LeaseOptions, type RecordIntentResult } from "./types"

/** The service's `recordIntent` and `recordOutcome`, as Promises rejecting with `StoreError` or `StoreInputError`. */
export interface StoreWrites {
  /** As the service's `recordIntent`. */
  readonly recordIntent: (intent: IntentInput, lease: LeaseOptions) => Promise<RecordIntentResult>
  /**
   * As the service's `recordOutcome`, without reading the intent back: resolves with how the write
   * ended (`Recorded`, `AlreadyFinished` when an earlier outcome stands, `Stale` when the writer's
   * fencing token `attempt` is not the intent's any more); rejects when no intent has the key.
   */
  readonly recordOutcome: (idempotencyKey: string, outcome: IntentOutcome, attempt?: number | undefined) => Promise<"Recorded" | "AlreadyFinished" | "Stale">
}

// The services and handles made over a backend here, and their writes. A service object made
// anywhere else (a wrapper of the caller's own) has none: its calls go through its own Effects.
const registry = new WeakMap<object, StoreWrites>()

/** The writes of a store service made by `makePayStore` (or its handle), if it is one. */
export function storeWritesOf(service: object): StoreWrites | undefined {
  return registry.get(service)
}

/** Notes `writes` as `service`'s (the service object and each handle spread from it). */
export function registerStoreWrites(service: object, writes: StoreWrites | undefined): void {
  if (writes !== undefined) registry.set(service, writes)
}

// Only the named fields reach a backend, so a caller passing its whole request object (card
// number included) cannot make an adapter store more than the schema's columns.
/** A copy of an intent with only the schema's fields. */
export function copyIntent(input: IntentInput): IntentInput {
  return {
    idempotencyKey: input.idempotencyKey,
    operation: input.operation,
    client_orderid: input.client_orderid,
    orderid: input.orderid,
    amount: input.amount,
    currency: input.currency,
    endpoint: input.endpoint,
    beforeRequired: input.beforeRequired === true ? true : undefined
  }
}

/** The writes over a backend, for the owner `instanceId` by default. */
export function makeStoreWrites(backend: StoreBackend, instanceId: string): StoreWrites {
  const adapter = backend.adapter
  const failed = (method: string) => (e: unknown): never => {
    throw toStoreError(adapter, method, e)
  }
  return {
    recordIntent: (intent, lease) => {
      const owner = lease.owner ?? instanceId
      const bad = checkRecordIntent(intent, lease.leaseMs, owner)
      if (bad !== undefined) return Promise.reject(bad)
      const now = Date.now()
      return backend.recordIntent(copyIntent(intent), owner, now, lease.leaseMs, now + (lease.sendsWithinMs ?? lease.leaseMs)).catch(failed("recordIntent"))
    },
    recordOutcome: (key, outcome, attempt) => {
      const prepared = prepareRecordOutcome(key, outcome)
      if (prepared instanceof StoreInputError) return Promise.reject(prepared)
      return backend.writeOutcome(key, prepared, Date.now(), attempt).then((result) => {
        if (result === undefined) throw noRecordedIntent()
        return result
      }, failed("recordOutcome"))
    }
  }
}
