/**
 * What the PayKit store holds and answers: payment intents (one per idempotency key), callback
 * claims (one per distinct callback query, by its SHA-256), OAuth nonces, and the store's errors.
 *
 * Times are epoch milliseconds read from Effect's `Clock` by the instance that makes the call, so
 * the instances of a fleet need clocks in sync (NTP) to well within the shortest lease.
 *
 * @packageDocumentation
 */
import * as Data from "effect/Data"

/** A JSON value, as the store keeps an outcome's small result. */
export type JsonValue = string | number | boolean | null | ReadonlyArray<JsonValue> | { readonly [key: string]: JsonValue }

/** A lease: how long (ms) the caller holds what it claims, and who the caller is. */
export interface LeaseOptions {
  /** Length of the lease in ms; pick it above the longest time the work can take. */
  readonly leaseMs: number
  /** The claiming instance (default: the store's `instanceId`). */
  readonly owner?: string | undefined
  /**
   * For a holder that sends (`recordIntent`, `reopenIntent`, `extendIntentLease`): it sends only
   * within this many ms from now (its call's deadline), recorded as the intent's `sendsEndBy`.
   * Default: `leaseMs` (no send outlives its lease).
   */
  readonly sendsWithinMs?: number | undefined
}

/** What a money-moving call records before its first send. Holds no card data, by construction. */
export interface IntentInput {
  /** The merchant's (or generated) idempotency key; unique per intent (1–255 characters). */
  readonly idempotencyKey: string
  /** The operation id (`SALE`, `CAPTURE`, ...) or client method name. */
  readonly operation: string
  /** The request's `client_orderid` (what `recover()` asks `status` by). */
  readonly client_orderid: string
  /** The request's `orderid`, for calls on an existing order (capture, return, void). */
  readonly orderid?: string | undefined
  /** The amount as the decimal string the wire carries (`"10.00"`); absent for a full capture or void. */
  readonly amount?: string | undefined
  /** ISO 4217 code (`"USD"`), when the request carries one. */
  readonly currency?: string | undefined
  /** The endpoint id or endpoint-group id the request goes to (what reconciliation must ask). */
  readonly endpoint: string
  /**
   * `true` when the caller records the order's {@link BeforeSnapshot} (`recordBefore`) before its
   * first send, as the client does for calls on an existing order. An intent that says so and has
   * no snapshot was provably never sent. Not part of the request (a retry need not repeat it).
   */
  readonly beforeRequired?: boolean | undefined
}

/**
 * The order as it was before a call on an existing order (capture, return, void) was sent: what
 * `recover()` compares the order with afterwards to prove whether the call landed. Only the
 * gateway's figures are kept, as strings, under the status reply's own names: `status`,
 * `transaction-type`, `serial-number`, `amount`, `currency`, `captured-amount`, `returned-amount`,
 * `hold-released-amount`, `chargeback-amount`, `order-stage`, `paynet-order-id`,
 * `merchant-order-id`, `card-ref-id`. Nothing else (no card data) is written.
 */
export type BeforeSnapshot = {
  /** The order's status before the call (the one field every snapshot has). */
  readonly status: string
} & { readonly [field: string]: string }

/** The final outcome of an intent: what the call returned, or the tag of the error it ended with. */
export type IntentOutcome =
  | {
    /** The call produced a result. */
    readonly _tag: "Returned"
    /** The gateway's status of the result (`approved`, `processing`, `declined`, ...). */
    readonly status: string
    /** The gateway's `orderid` (`paynet-order-id`), when known. */
    readonly orderid?: string | undefined
    /** A small JSON of the result; sensitive fields are dropped and PAN-shaped digits masked on write. */
    readonly data?: JsonValue | undefined
  }
  | {
    /** The call ended with an error. */
    readonly _tag: "Failed"
    /** The `_tag` of the error the call ended with (`OutcomeUnknown`, `GatewayValidationError`, ...). */
    readonly errorTag: string
    /** The gateway's `orderid`, when known. */
    readonly orderid?: string | undefined
    /** A small JSON of the error's fields; sanitised like `Returned.data`. */
    readonly data?: JsonValue | undefined
  }

/** An intent as stored. */
export interface Intent extends IntentInput {
  /** When it was first recorded (epoch ms). */
  readonly createdAt: number
  /** The instance that holds it now (the caller, a taker-over, or a `recover()` run). */
  readonly owner: string
  /** Until when `owner` holds it (epoch ms); past it, another instance may take it over. */
  readonly leaseUntil: number
  /** How many times it was held: 1 when recorded, +1 per take-over or `unfinished()` claim. */
  readonly attempts: number
  /** Its outcome, once recorded; final. */
  readonly outcome?: IntentOutcome | undefined
  /** When the outcome was recorded (epoch ms). */
  readonly finishedAt?: number | undefined
  /** The order before the first send (calls on an existing order), once recorded. */
  readonly before?: BeforeSnapshot | undefined
  /**
   * The moment (epoch ms) by which every send made under the key so far has ended: each holder that
   * may send records its own deadline here (`LeaseOptions.sendsWithinMs`). A proof that the call did
   * not land waits out the processing window from this moment, never from `createdAt`
   * (docs/fleet.md#the-intent-protocol). `undefined` on intents written before migration 3: then
   * `leaseUntil` stands in for it.
   */
  readonly sendsEndBy?: number | undefined
}

/**
 * The answer of `recordIntent`, a claim-or-get on the idempotency key, decided atomically by the
 * store:
 * - `Recorded`: the key was new; this caller holds the intent and sends.
 * - `Finished`: the key has an outcome; replay `intent.outcome`, send nothing.
 * - `InFlight`: another call holds the key until `intent.leaseUntil`; join it (poll `findByKey`).
 * - `TakenOver`: the holder's lease ran out without an outcome (it crashed or hung); this caller
 *   holds it now, but the earlier send may have landed: settle by `status` before any resend.
 * - `Conflict`: the key was recorded for a different request; `fields` names what differs.
 */
export type RecordIntentResult =
  | {
    /** The key was new: send. */
    readonly _tag: "Recorded"
    /** The intent as stored now. */
    readonly intent: Intent
  }
  | {
    /** The key has an outcome: replay it. */
    readonly _tag: "Finished"
    /** The intent as stored now. */
    readonly intent: Intent
  }
  | {
    /** Another call holds the key: join it. */
    readonly _tag: "InFlight"
    /** The intent as stored now. */
    readonly intent: Intent
  }
  | {
    /** The holder's lease ran out: settle by status before any resend. */
    readonly _tag: "TakenOver"
    /** The intent as stored now. */
    readonly intent: Intent
  }
  | {
    /** The key belongs to a different request. */
    readonly _tag: "Conflict"
    /** The intent as stored now. */
    readonly intent: Intent
    /** The request fields that differ. */
    readonly fields: ReadonlyArray<string>
  }

/**
 * The answer of `recordOutcome`: the first outcome wins and is final, except that a success always
 * replaces a recorded failure (money moved: a "not applied" written meanwhile was wrong), and a
 * failure written by a holder that lost the intent is refused (`Stale`).
 */
export type RecordOutcomeResult =
  | {
    /** This outcome was recorded. */
    readonly _tag: "Recorded"
    /** The intent as stored now. */
    readonly intent: Intent
  }
  | {
    /** An earlier outcome stands (in `intent.outcome`). */
    readonly _tag: "AlreadyFinished"
    /** The intent as stored now. */
    readonly intent: Intent
  }
  | {
    /** The writer's fencing token is not the intent's any more (another holder took it over): nothing was written. */
    readonly _tag: "Stale"
    /** The intent as stored now. */
    readonly intent: Intent
  }

/**
 * The answer of `claimCallback`, decided atomically by the store:
 * - `Claimed`: run the merchant's handler now, then `completeCallback` (or `releaseCallback` when
 *   it failed). `attempt` is 1 the first time, more when an earlier holder's lease ran out.
 * - `RunningElsewhere`: a live lease is held (by `owner`, until `leaseUntil`); answer non-200 so the
 *   gateway redelivers later.
 * - `Done`: the callback's effect has completed; answer 200 and run nothing.
 */
export type CallbackClaim =
  | {
    /** This caller runs the handler now. */
    readonly _tag: "Claimed"
    /** 1 for the first claim, more after an earlier holder's lease ran out. */
    readonly attempt: number
    /** The claim's lease end (epoch ms). */
    readonly leaseUntil: number
  }
  | {
    /** Another live claim holds the callback. */
    readonly _tag: "RunningElsewhere"
    /** The holder. */
    readonly owner: string
    /** The holder's lease end (epoch ms). */
    readonly leaseUntil: number
  }
  | {
    /** The callback's effect has completed. */
    readonly _tag: "Done"
    /** When it completed (epoch ms). */
    readonly completedAt: number
  }

/** The answer of `completeCallback`. */
export type CallbackCompletion = "completed" | "already-completed" | "not-claimed"

/**
 * The answer of `takeOrderLease`: the caller holds the order until `leaseUntil` (`token` is its
 * fencing token), or another call holds it until `leaseUntil`.
 */
export type OrderLeaseResult =
  | {
    /** This call holds the order. */
    readonly _tag: "Taken"
    /** Increases with every taking of the order's lease. */
    readonly token: number
    /** The lease's end (epoch ms). */
    readonly leaseUntil: number
  }
  | {
    /** Another call holds the order. */
    readonly _tag: "Held"
    /** The holder's lease end (epoch ms). */
    readonly leaseUntil: number
  }

/** How many rows `purge` deleted. */
export interface PurgeReport {
  /** Finished intents removed. */
  readonly intents: number
  /** Completed callback claims removed. */
  readonly callbacks: number
  /** Expired nonces removed. */
  readonly nonces: number
}

/** One applied migration, as `migrate` reports it. */
export interface MigrationRecord {
  /** Version number (the file's prefix). */
  readonly version: number
  /** Name (the file's suffix). */
  readonly name: string
  /** Whether this run applied it (`false`: it was applied before). */
  readonly applied: boolean
}

/** The database (or the memory adapter) failed; nothing was half-written (each step is one statement or transaction). */
export class StoreError extends Data.TaggedError("StoreError")<{
  /** The money-moving call's idempotency key (given or generated), when a call failed on the store. */
  readonly idempotencyKey?: string | undefined
  /** The store method that failed, e.g. `recordIntent`. */
  readonly method: string
  /** The adapter (`memory`, `pglite`, `postgres`). */
  readonly adapter: string
  /** The SQLSTATE code, when the database sent one. */
  readonly code?: string | undefined
  /** What went wrong; never a value of the call, a key or a credential. */
  readonly reason: string
}> {
  /** One line naming the method, the adapter and the reason. */
  override get message(): string {
    return `store ${this.adapter}: ${this.method}: ${this.reason}${this.code === undefined ? "" : ` (${this.code})`}`
  }
}

/** A store method was given a value that breaks its rule; nothing was written. */
export class StoreInputError extends Data.TaggedError("StoreInputError")<{
  /** The money-moving call's idempotency key (given or generated), when a call failed on the store. */
  readonly idempotencyKey?: string | undefined
  /** The store method, e.g. `recordIntent`. */
  readonly method: string
  /** The offending field. */
  readonly field: string
  /** The rule it broke (the value itself is never shown). */
  readonly rule: string
}> {
  /** One line naming the method, the field and the rule. */
  override get message(): string {
    return `store: ${this.method}: ${this.field}: ${this.rule}`
  }
}
