/**
 * The snapshot format (version 2: orders carry their ledger): JSON-safe records of the simulator's state. What goes in and
 * what never does is explained in `snapshot.ts`.
 *
 * @packageDocumentation
 */
import type { Status } from "@paykit/contracts"
import type { CardData, Outcome } from "../rules/cards"
import type { OrderKind } from "../state/orders"
import type { ThreeDSStateName } from "../rules/threeds"
import type { CallbackAttempt } from "../callbacks/sender"
import type { Bucket, EntryState, LedgerKind, LedgerOp } from "../ledger/index"

/** The snapshot format this version writes and reads. */
export const SNAPSHOT_VERSION = 2

/** A card as the simulator keeps it (already JSON-safe): masked, never the PAN or the CVV. */
export type SnapshotCard = CardData

/** A transaction of an order. */
export interface SnapshotTransaction {
  /** Transaction type, e.g. `sale`, `capture`. */
  readonly type: string
  /** Its status. */
  readonly status: Status
  /** Minor units as a decimal integer string, when the transaction moves an amount. */
  readonly amount?: string
  /** The gateway's `serial-number` of the transaction. */
  readonly serialNumber: string
  /** Epoch ms on the simulator clock. */
  readonly at: number
}

/** An order with everything the simulator tracks. */
export interface SnapshotOrder {
  /** The gateway's order id. */
  readonly orderid: string
  /** The merchant's order id. */
  readonly clientOrderId: string
  /** The merchant (its control key is looked up by this login on restore, never stored). */
  readonly login: string
  /** The endpoint (or group) the order was placed on, as decimal digits (a number in older snapshots is read too). */
  readonly endpointId: string
  /** What created the order (`sale`, `preauth`, `rebill`, `payout`, …). */
  readonly kind: OrderKind
  /** The operation id that created the order. */
  readonly operation: string
  /** ISO 4217 currency code. */
  readonly currency: string
  /** Authorized or charged amount, minor units as a decimal integer string. */
  readonly amount: string
  /** The amount as sent. */
  readonly amountText: string
  /** The order's status. */
  readonly status: Status
  /** The card, as kept. */
  readonly card?: SnapshotCard
  /** What the processor answers for the order's transactions. */
  readonly outcome: Outcome
  /** The order's money: every reservation, committed, released or still in flight. */
  readonly ledger: SnapshotLedger
  /** Error code of the first transaction's final status. */
  readonly errorCode?: string
  /** Error message of the first transaction's final status. */
  readonly errorMessage?: string
  /** The customer's e-mail. */
  readonly email?: string
  /** The merchant's `redirect_url`. */
  readonly redirectUrl?: string
  /** The merchant's `server_callback_url`. */
  readonly serverCallbackUrl?: string
  /** The merchant's `merchant_data`. */
  readonly merchantData?: string
  /** The card reference made from or used by the order. */
  readonly cardRefId?: string
  /** The recurring payment that created (or is) the order. */
  readonly recurringPaymentId?: string
  /** 3-D Secure state (`method`, `challenge`, `passed`, `failed`), the method result and how it ended. */
  readonly threeDS?: {
    /** Where the 3-D Secure flow stands. */
    readonly state: ThreeDSStateName
    /** The method step result, once uploaded. */
    readonly compInd?: "Y" | "N" | "U"
    /** How the result arrived. */
    readonly via?: "acs-page" | "cres" | "pares"
    /** The 3-D Secure version of the flow, once an upload fixed it. */
    readonly version?: 1 | 2
  }
  /** Hosted-form state: which form and whether the customer submitted it. */
  readonly form?: {
    /** Which form. */
    readonly operation: "sale" | "preauth" | "account-verification" | "payout"
    /** Whether the customer submitted it. */
    readonly submitted: boolean
  }
  /** What a repeated request under the same client_orderid must match. */
  readonly fingerprint: string
  /** The first reply, replayed for a repeated identical request. */
  readonly reply?: Readonly<Record<string, string>>
  /** The order's transactions, oldest first. */
  readonly transactions: ReadonlyArray<SnapshotTransaction>
  /** Epoch ms on the simulator clock. */
  readonly createdAt: number
}

/** An order's ledger (see the testkit's `ledger/`); amounts are minor units as decimal integer strings. */
export interface SnapshotLedger {
  /** Which money operations apply to the order. */
  readonly kind: LedgerKind
  /** Whether the charge has settled. */
  readonly settled: boolean
  /** Every reservation, oldest first. */
  readonly entries: ReadonlyArray<{
    /** Index of the transaction in the order. */
    readonly tx: number
    /** The ledger operation. */
    readonly op: LedgerOp
    /** The amount accepted. */
    readonly amount: string
    /** What committing adds to each bucket. */
    readonly moves: Readonly<Partial<Record<Bucket, string>>>
    /** In flight, committed or released. */
    readonly state: EntryState
  }>
}

/** A card reference. */
export interface SnapshotCardRef {
  /** The card-ref id. */
  readonly id: string
  /** The merchant it belongs to. */
  readonly login: string
  /** The payment it was made from. */
  readonly orderid: string
  /** The card, as kept. */
  readonly card: SnapshotCard
}

/** A recurring payment. */
export interface SnapshotRecurringPayment {
  /** The recurring-payment id. */
  readonly id: string
  /** The merchant's client-orderid of the create request (charges are `<it>-<n>`). */
  readonly clientOrderId: string
  /** The amount as sent. */
  readonly amountText: string
  /** Minor units as a decimal integer string. */
  readonly amount: string
  /** ISO 4217 currency code. */
  readonly currency: string
  /** The card, as kept. */
  readonly card: SnapshotCard
  /** Period of the schedule, if any. */
  readonly period?: "day" | "week" | "month"
  /** Periods between charges. */
  readonly interval: number
  /** Epoch ms after which no charge is made. */
  readonly finishAt?: number
  /** When the queued scheduled charge is due (an update replaces it). */
  readonly nextChargeAt?: number | null
  /** Charges made so far. */
  readonly charges: number
  /** Charges made by process-recurring-payment. */
  readonly processed?: number
  /** The merchant. */
  readonly login: string
  /** The endpoint of the create request, as decimal digits. */
  readonly endpointId: string
  /** The operation of the create request. */
  readonly operation: string
  /** Fields of the create request each charge's order carries (e-mail, URLs, merchant data). */
  readonly orderFields: Readonly<Record<string, string>>
}

/** Work queued on the simulator clock: finalize, settle, callback, recurring-charge or chargeback. */
export type SnapshotJob = SnapshotFinalizeJob | SnapshotSettleJob | SnapshotCallbackJob | SnapshotRecurringChargeJob | SnapshotChargebackJob

/** The final status of transaction `tx` of an order, unless something decided it first. */
export interface SnapshotFinalizeJob {
  /** Due time, epoch ms on the simulator clock. */
  readonly at: number
  /** Tag. */
  readonly kind: "finalize"
  /** The order. */
  readonly orderid: string
  /** Index of the transaction in the order. */
  readonly tx: number
  /** The status (and error code and message) it becomes. */
  readonly final: {
    /** The final status. */
    readonly status: "approved" | "declined" | "error" | "filtered"
    /** Its error code, when not approved. */
    readonly errorCode?: string
    /** Its error message, when not approved. */
    readonly errorMessage?: string
  }
}

/** Settlement of an approved charge (it can no longer be voided). */
export interface SnapshotSettleJob {
  /** Due time, epoch ms on the simulator clock. */
  readonly at: number
  /** Tag. */
  readonly kind: "settle"
  /** The order. */
  readonly orderid: string
}

/** A callback delivery attempt. */
export interface SnapshotCallbackJob {
  /** Due time, epoch ms on the simulator clock. */
  readonly at: number
  /** Tag. */
  readonly kind: "callback"
  /** The attempt this job makes (1 = first delivery). */
  readonly attempt: number
  /** What to deliver: the merchant's URL and login (the control key is looked up), the operation that created the order, and the ServerCallback fields without control. */
  readonly callback: {
    /** The merchant's `server_callback_url`. */
    readonly url: string
    /** The merchant (its control key signs the callback; looked up on restore). */
    readonly login: string
    /** The operation that created the order (`callback-fail` rules may name it). */
    readonly operation: string
    /** The ServerCallback fields, without `control`. */
    readonly fields: Readonly<Record<string, string>>
  }
}

/** The chargeback of a settled order (the chargeback test card). */
export interface SnapshotChargebackJob {
  /** Due time, epoch ms on the simulator clock. */
  readonly at: number
  /** Tag. */
  readonly kind: "chargeback"
  /** The order. */
  readonly orderid: string
}

/** The next charge of a recurring payment. */
export interface SnapshotRecurringChargeJob {
  /** Due time, epoch ms on the simulator clock. */
  readonly at: number
  /** Tag. */
  readonly kind: "recurring-charge"
  /** The recurring payment. */
  readonly recurringPaymentId: string
}

/** An OAuth nonce still inside the window. */
export interface SnapshotNonce {
  /** The merchant login (OAuth consumer key). */
  readonly consumerKey: string
  /** The nonce. */
  readonly nonce: string
  /** Epoch seconds (wall clock) until which it is refused. */
  readonly expiresAt: number
}

/** Everything a simulator needs to continue where another one stopped. JSON-safe. */
export interface SimulatorSnapshot {
  /** Format version; `createSimulator` refuses any other. */
  readonly version: 2
  /** The simulator clock: its time, its mode, and how far it ran ahead of wall time. */
  readonly clock: {
    /** Epoch ms on the simulator clock when the snapshot was taken. */
    readonly now: number
    /** The clock mode of the simulator that took it. */
    readonly mode: "virtual" | "real"
    /** `now` minus wall time at that moment (a real clock keeps it on restore). */
    readonly wallOffsetMs: number
  }
  /** The origin of `redirect-url` links (a restored simulator keeps it until `listen()` sets its own). */
  readonly baseUrl: string
  /** Id counters: orderids and card-ref / recurring-payment ids continue from here. */
  readonly counters: {
    /** The next orderid to hand out. */
    readonly nextOrderId: number
    /** The counter of the next card-ref / recurring-payment id. */
    readonly nextRefId: number
  }
  /** Salt of the card fingerprints (useless without the merchant's control key). */
  readonly fingerprintSalt: string
  /** Every order, oldest first. */
  readonly orders: ReadonlyArray<SnapshotOrder>
  /** Every card reference. */
  readonly cardRefs: ReadonlyArray<SnapshotCardRef>
  /** Every recurring payment. */
  readonly recurringPayments: ReadonlyArray<SnapshotRecurringPayment>
  /** Queued work in the order it will run: finalisations, settlements, callback attempts, recurring charges. */
  readonly pendingJobs: ReadonlyArray<SnapshotJob>
  /** Every callback delivery attempt so far. */
  readonly callbackAttempts: ReadonlyArray<CallbackAttempt>
  /** OAuth nonces still inside the ±300 s window. */
  readonly nonces: ReadonlyArray<SnapshotNonce>
}
