/**
 * Snapshots: the simulator's whole state as one JSON-safe, versioned value, and restoring a new
 * simulator from it (`createSimulator({ restore })`), so a restart keeps orders, money, pending work
 * and replay protection.
 *
 * Pending work is data, not closures: every task on the clock carries a small tagged record
 * ({@link PendingJob}: finalize, settle, callback, recurring-charge) and the snapshot keeps those
 * records; restore queues them again and the engine rebuilds the work from them. Callback attempts
 * under way at snapshot time are kept as jobs due at the snapshot's time (delivery is at least once:
 * the merchant may see that callback twice).
 *
 * Never in a snapshot: a PAN, a CVV, a control key or private key (a restored simulator finds each
 * order's key by its merchant login), fault rules (test configuration; add them again).
 *
 * @packageDocumentation
 */
import type { Status } from "@paykit/contracts"
import type { CardData, Outcome } from "./cards"
import type { CallbackJob } from "./callbacks"
import type { CardRef, Engine, PendingJob } from "./engine"
import type { RecurringPayment } from "./operations/recurring"
import type { Order, OrderKind } from "./state/orders"
import type { ThreeDSStateName } from "./threeds"
import type { CallbackAttempt } from "./types"

/** The snapshot format this version writes and reads. */
export const SNAPSHOT_VERSION = 1

/** A card as the simulator keeps it: masked, never the PAN or the CVV. */
export interface SnapshotCard {
  /** First six, asterisks, last four. */
  readonly masked: string
  /** First six digits. */
  readonly bin: string
  /** Last four digits. */
  readonly last4: string
  /** Card brand. */
  readonly brand: string
  /** Expiry month, two digits. */
  readonly expireMonth: string
  /** Expiry year, four digits. */
  readonly expireYear: string
  /** Name printed on the card, when sent. */
  readonly holder?: string
  /** The outcome the test-card table chose for it (rebills replay it). */
  readonly outcome: Outcome
  /** Keyed hash of the PAN (salt + the merchant's control key); not reversible without the key. */
  readonly fingerprint: string
}

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
  /** The endpoint (or group) the order was placed on. */
  readonly endpointId: number
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
  /** Whether the charge has settled. */
  readonly settled: boolean
  /** Whether it was voided. */
  readonly voided: boolean
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
  }
  /** Hosted-form state: which form and whether the customer submitted it. */
  readonly form?: {
    /** Which form. */
    readonly operation: "sale" | "preauth" | "account-verification" | "payout"
    /** Whether the customer submitted it. */
    readonly submitted: boolean
  }
  /** Payout-check registered it (`checked`); payout-pay executed it (`paid`). */
  readonly payoutStage?: "checked" | "paid"
  /** What a repeated request under the same client_orderid must match. */
  readonly fingerprint: string
  /** The first reply, replayed for a repeated identical request. */
  readonly reply?: Readonly<Record<string, string>>
  /** The order's transactions, oldest first. */
  readonly transactions: ReadonlyArray<SnapshotTransaction>
  /** Epoch ms on the simulator clock. */
  readonly createdAt: number
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
  /** Charges made so far. */
  readonly charges: number
  /** The merchant. */
  readonly login: string
  /** The endpoint of the create request. */
  readonly endpointId: number
  /** The operation of the create request. */
  readonly operation: string
  /** Fields of the create request each charge's order carries (e-mail, URLs, merchant data). */
  readonly orderFields: Readonly<Record<string, string>>
}

/** Work queued on the simulator clock: finalize, settle, callback or recurring-charge. */
export type SnapshotJob = SnapshotFinalizeJob | SnapshotSettleJob | SnapshotCallbackJob | SnapshotRecurringChargeJob

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
  readonly version: 1
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

const card = (c: CardData): SnapshotCard => ({ ...c })

function orderOut(o: Order): SnapshotOrder {
  const { controlKey: _key, amount, card: c, transactions, threeDS, form, reply, ...rest } = o
  return {
    ...rest,
    amount: amount.toString(),
    ...(c === undefined ? {} : { card: card(c) }),
    ...(threeDS === undefined ? {} : { threeDS: { ...threeDS } }),
    ...(form === undefined ? {} : { form: { ...form } }),
    ...(reply === undefined ? {} : { reply: { ...reply } }),
    transactions: transactions.map(({ amount: a, ...t }) => (a === undefined ? { ...t } : { ...t, amount: a.toString() }))
  }
}

function jobOut(at: number, job: PendingJob): SnapshotJob {
  if (job.kind !== "callback") return { at, ...job }
  const { controlKey: _key, ...callback } = job.callback
  return { at, kind: "callback", attempt: job.attempt, callback: { ...callback, fields: { ...callback.fields } } }
}

/** The snapshot of an engine's state. */
export function snapshotOf(engine: Engine): SimulatorSnapshot {
  const now = engine.clock.now()
  const jobs = engine.clock.pendingJobs().map(({ at, job }) => jobOut(at, job as PendingJob))
  // Attempts under way are delivered again by the restored simulator (at least once).
  for (const flight of engine.callbacks.inFlight()) jobs.push(jobOut(now, { kind: "callback", attempt: flight.attempt, callback: flight.job }))
  jobs.sort((a, b) => a.at - b.at)
  return {
    version: SNAPSHOT_VERSION,
    clock: { now, mode: engine.clock.isReal ? "real" : "virtual", wallOffsetMs: now - Date.now() },
    baseUrl: engine.baseUrl,
    counters: { nextOrderId: engine.store.nextOrderId, nextRefId: engine.nextRef },
    fingerprintSalt: engine.fingerprintSalt,
    orders: engine.store.all().map(orderOut),
    cardRefs: [...engine.cardRefs.values()].map((r) => ({ id: r.id, login: r.login, orderid: r.orderid, card: card(r.card) })),
    recurringPayments: [...engine.recurring.values()].map(({ amount, card: c, orderFields, ...rp }) => ({ ...rp, amount: amount.toString(), card: card(c), orderFields: { ...orderFields } })),
    pendingJobs: jobs,
    callbackAttempts: engine.callbacks.attempts().map((a) => ({ ...a })),
    nonces: engine.nonces.live(Math.floor(Date.now() / 1000))
  }
}

/** Refuses anything that is not a version-1 snapshot, with a message that says why. */
export function checkSnapshot(value: unknown): asserts value is SimulatorSnapshot {
  if (typeof value !== "object" || value === null) throw new TypeError("createSimulator: restore must be a snapshot object (from sim.snapshot())")
  const version = (value as { version?: unknown }).version
  if (version !== SNAPSHOT_VERSION) {
    throw new TypeError(`createSimulator: unsupported snapshot version ${JSON.stringify(version)}; this @paykit/testkit reads version ${SNAPSHOT_VERSION}`)
  }
  for (const key of ["clock", "counters", "orders", "cardRefs", "recurringPayments", "pendingJobs", "callbackAttempts", "nonces"] as const) {
    if (typeof (value as unknown as Record<string, unknown>)[key] !== "object" || (value as unknown as Record<string, unknown>)[key] === null) {
      throw new TypeError(`createSimulator: snapshot.${key} is missing`)
    }
  }
}

/**
 * The time a restored clock starts at: a virtual clock resumes at the snapshot's time; a real clock
 * at the later of that and wall time plus the offset it had (the time spent down has passed), so it
 * never goes back.
 */
export function resumeTime(snapshot: SimulatorSnapshot, mode: "virtual" | "real"): number {
  if (mode === "virtual") return snapshot.clock.now
  const offset = snapshot.clock.mode === "real" ? snapshot.clock.wallOffsetMs : 0
  return Math.max(snapshot.clock.now, Date.now() + offset)
}

/** Loads a snapshot into a fresh engine (its clock already at {@link resumeTime}). */
export function restoreInto(engine: Engine, snapshot: SimulatorSnapshot): void {
  const keyOf = (login: string, what: string): string => {
    const merchant = engine.merchantByLogin(login)
    if (merchant === undefined) {
      throw new Error(`createSimulator: the snapshot has ${what} of merchant "${login}", which this simulator is not configured with (pass the same merchants)`)
    }
    return merchant.controlKey
  }
  const cardIn = (c: SnapshotCard): CardData => ({ ...c })
  engine.fingerprintSalt = snapshot.fingerprintSalt
  engine.store.nextOrderId = snapshot.counters.nextOrderId
  engine.nextRef = snapshot.counters.nextRefId
  for (const o of snapshot.orders) {
    const { amount, card: c, transactions, threeDS, form, reply, ...rest } = o
    const order: Order = {
      ...rest,
      controlKey: keyOf(o.login, `order ${o.orderid}`),
      amount: BigInt(amount),
      transactions: transactions.map(({ amount: a, ...t }) => (a === undefined ? { ...t } : { ...t, amount: BigInt(a) }))
    }
    if (c !== undefined) order.card = cardIn(c)
    if (threeDS !== undefined) order.threeDS = { ...threeDS }
    if (form !== undefined) order.form = { ...form }
    if (reply !== undefined) order.reply = { ...reply }
    engine.store.add(order)
  }
  for (const r of snapshot.cardRefs) {
    keyOf(r.login, `card ref ${r.id}`)
    const ref: CardRef = { id: r.id, login: r.login, orderid: r.orderid, card: cardIn(r.card) }
    engine.cardRefs.set(ref.id, ref)
    engine.cardRefByOrder.set(ref.orderid, ref.id)
  }
  for (const r of snapshot.recurringPayments) {
    keyOf(r.login, `recurring payment ${r.id}`)
    const rp: RecurringPayment = { ...r, amount: BigInt(r.amount), card: cardIn(r.card), orderFields: { ...r.orderFields } }
    engine.recurring.set(rp.id, rp)
  }
  engine.callbacks.restoreLog(snapshot.callbackAttempts)
  for (const job of snapshot.pendingJobs) {
    if (job.kind === "callback") {
      const callback: CallbackJob = {
        ...job.callback,
        controlKey: keyOf(job.callback.login, "a callback"),
        fields: { ...job.callback.fields } as CallbackJob["fields"]
      }
      engine.callbacks.schedule(job.at, callback, job.attempt)
    } else {
      const { at, ...rest } = job
      engine.schedule(at, rest)
    }
  }
  engine.nonces.load(snapshot.nonces, Math.floor(Date.now() / 1000))
}
