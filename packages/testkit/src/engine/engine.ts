/**
 * The simulator's state and its time-driven rules: orders and transactions, finalisation after the
 * processing delay, settlement, and callbacks. Operations (../operations) call into it.
 *
 * @packageDocumentation
 */
import * as nodeCrypto from "node:crypto"
import { errorCodes, type ErrorCode, type Status } from "@paykit/contracts"
import { SimClock } from "../clock/clock"
import { Faults } from "../rules/faults"
import { CallbackSender, type CallbackJobRecord } from "../callbacks/sender"
import { callbackDelivery } from "../callbacks/targets"
import type { FairUse } from "../http/fair-use"
import { exponentOf, minorUnits, oauthVerifier } from "../auth/auth"
import { parsePublicKey, type Merchant, type MerchantConfig } from "../auth/merchant"
import type { OAuthVerifier } from "@paykit/signing"
import { OrderStore, formatMinor, type Order, type Transaction } from "../state/orders"
import { CHARGEBACK_DELAY_MS, finalOf, SLOW_CARD_DELAY_MS, type Outcome } from "../rules/cards"
import { SimError, serialNumber } from "../http/replies"
import { checkInvariants, commit, hasEntry, holds, limitOf, release, reserve, settle, totalsOf, type Ledger, type LedgerOp, type Refusal } from "../ledger/index"
import type { InvariantViolation } from "../state/views"
import type { CardRef, RecurringPayment } from "../state/refs"
import { SimNonceStore } from "../auth/nonces"
import { endpointIdOf } from "../http/endpoint-id"
import { RequestLog } from "../http/request-log"
import { approvalCode, callbackType, processorRrn } from "./transaction-codes"
import { Retention, type RetentionPolicy } from "../state/retention"

export type { CardRef } from "../state/refs"

/** Final result of a transaction. */
interface Final {
  readonly status: Exclude<Status, "processing" | "unknown">
  readonly errorCode?: string
  readonly errorMessage?: string
}

/**
 * Work queued on the simulator clock, as data: the clock keeps this record next to the closure, a
 * snapshot keeps only the record, and {@link Engine.runJob} turns it back into the work.
 */
export type PendingJob =
  /** Final status of transaction `tx` (index in the order) unless something decided it first. */
  | { readonly kind: "finalize"; readonly orderid: string; readonly tx: number; readonly final: Final }
  /** Settlement of an approved charge. */
  | { readonly kind: "settle"; readonly orderid: string }
  /** A callback delivery attempt. */
  | CallbackJobRecord
  /** The next charge of a recurring payment. */
  | { readonly kind: "recurring-charge"; readonly recurringPaymentId: string }
  /** The chargeback of a settled order (the chargeback test card, decision 17). */
  | { readonly kind: "chargeback"; readonly orderid: string }

/** Why an order cannot be charged back (the test route answers it as `reason`). */
export type ChargebackRefusal = "not-a-charge" | "not-approved" | "voided" | "not-settled" | "fully-refunded" | "exceeds-refundable"

/** The outcome of {@link Engine.chargeback}. */
type ChargebackResult =
  | { readonly ok: true; readonly tx: Transaction }
  | { readonly ok: false; readonly reason: ChargebackRefusal; readonly message: string }

/** What the engine reads of the simulator's options (each is documented on `SimulatorOptions`). */
type EngineOptions = Parameters<typeof callbackDelivery>[0] & {
  readonly merchants?: ReadonlyArray<MerchantConfig> | undefined
  readonly processingDelayMs?: number | undefined
  readonly settlementDelayMs?: number | undefined
  readonly clock?: "virtual" | "real" | undefined
  readonly startTime?: number | undefined
  readonly baseUrl?: string | undefined
  readonly retention?: RetentionPolicy | undefined
  readonly testMode?: boolean | undefined
}

/** Accepts {@link MerchantConfig} and also the {@link testMerchant} shape (endpointId, publicKeyPem). */
type MerchantInput = MerchantConfig & { endpointId?: number | string; endpointGroupId?: number | string; publicKeyPem?: string }

/** Everything the simulator knows and does over time. */
export class Engine {
  readonly clock: SimClock
  readonly store = new OrderStore()
  readonly faults = new Faults()
  /** Recent requests (the dashboard and paykit-sim's stdout log); kept across reset. */
  readonly requests = new RequestLog()
  readonly callbacks: CallbackSender
  /** OAuth verification on the simulator clock; replaced on reset (which forgets nonces). */
  oauth: OAuthVerifier
  /** The nonces {@link Engine.oauth} remembers (replaced with it). */
  nonces!: SimNonceStore
  /** Set by `close()`: a closed simulator processes nothing more (requests get a dropped connection). */
  closed = false
  /** Per-merchant fair use (set by the simulator when `rateLimit` is configured). */
  fairUse: FairUse | undefined = undefined
  /** Runs a recurring charge (set by the simulator; lives in operations/recurring). */
  recurringCharge: (engine: Engine, recurringPaymentId: string, at: number) => void = () => undefined
  readonly cardRefs = new Map<string, CardRef>()
  readonly cardRefByOrder = new Map<string, string>()
  readonly recurring = new Map<string, RecurringPayment>()
  readonly processingDelayMs: number
  readonly settlementDelayMs: number
  baseUrl: string
  private readonly byLogin = new Map<string, Merchant>()
  private readonly byEndpoint = new Map<string, Merchant>()
  /**
   * A random per-simulator salt; a card fingerprint is keyed by it AND the merchant's control key.
   * Without the salt fingerprints cannot be looked up in a table of test PANs; a snapshot carries
   * the salt (a restored simulator must compare cards of orders made before) but never the control
   * key, so a snapshot alone does not let anyone brute-force the PANs behind its fingerprints.
   */
  fingerprintSalt = nodeCrypto.randomBytes(16).toString("hex")
  /** Counter of card-ref and recurring-payment ids. */
  nextRef = 1
  /** Broken invariants caught when a ledger change was attempted (a bug: that change was not applied). */
  readonly violations: InvariantViolation[] = []
  /** Which final orders are forgotten, and when (state/retention.ts). */
  readonly retention: Retention

  constructor(options: EngineOptions, defaults: ReadonlyArray<MerchantConfig>) {
    this.clock = new SimClock(options.clock ?? "virtual", options.startTime)
    this.processingDelayMs = options.processingDelayMs ?? 2000
    this.settlementDelayMs = options.settlementDelayMs ?? 24 * 60 * 60 * 1000
    this.baseUrl = (options.baseUrl ?? "http://paykit-sim.local").replace(/\/+$/, "")
    this.retention = new Retention(options.retention)
    // Pending work is the job record alone (no closure per order): the clock hands it back here.
    this.clock.runner = (job, at) => this.runJob(job as Exclude<PendingJob, CallbackJobRecord>, at)
    this.callbacks = new CallbackSender(this.clock, this.faults, callbackDelivery(options))
    for (const config of (options.merchants ?? defaults) as ReadonlyArray<MerchantInput>) {
      const ids = [
        ...(config.endpointIds ?? (config.endpointId === undefined ? [] : [config.endpointId])),
        ...(config.endpointGroupIds ?? (config.endpointGroupId === undefined ? [] : [config.endpointGroupId]))
      ]
      const endpoints = new Set(ids.map((id) => endpointIdOf(id, `merchant ${config.login}: endpoint id`)))
      if (config.callbackControlKey !== undefined && (typeof config.callbackControlKey !== "string" || config.callbackControlKey === "")) {
        // The rule only: the value may be a key.
        throw new TypeError(`merchant ${config.login}: callbackControlKey must be a non-empty string (the key its callbacks are signed with)`)
      }
      const merchant: Merchant = {
        login: config.login,
        controlKey: config.controlKey,
        callbackControlKey: config.callbackControlKey ?? config.controlKey,
        endpoints,
        publicKey: parsePublicKey(config.rsaPublicKeyPem ?? config.publicKeyPem),
        minorUnits: config.minorUnits ?? "cents",
        explainSignatures: options.testMode !== false
      }
      this.byLogin.set(merchant.login, merchant)
      for (const id of endpoints) this.byEndpoint.set(id, merchant)
    }
    this.oauth = this.newVerifier()
  }

  private newVerifier(): OAuthVerifier {
    // Signers stamp oauth_timestamp with their wall clock, so the ±300 s window is checked against
    // the wall clock too: advancing the simulator clock (to fire recurring charges, settle orders)
    // must not make every later OAuth request stale.
    this.nonces = new SimNonceStore()
    return oauthVerifier(() => Date.now(), (login) => this.byLogin.get(login), this.nonces)
  }

  merchantByLogin(login: string): Merchant | undefined {
    return this.byLogin.get(login)
  }

  /** The key an order's callbacks and final redirect are signed with: its merchant's `callbackControlKey`. */
  callbackKeyOf(order: Order): string {
    return this.byLogin.get(order.login)?.callbackControlKey ?? order.controlKey
  }

  /** The merchant of an endpoint or group id (decimal digits). */
  merchantByEndpoint(endpointId: string): Merchant | undefined {
    return this.byEndpoint.get(endpointId)
  }

  /** Minor units of an amount (invalid → 400 invalid-amount). */
  minor(amount: string, currency: string, field = "amount"): bigint {
    return minorUnits(amount, currency, field)
  }

  /** Decimal string of minor units in the currency. */
  format(minor: bigint, currency: string): string {
    return formatMinor(minor, exponentOf(currency))
  }

  /**
   * A keyed hash of a PAN (salt + the merchant's control key): lets two requests be compared without
   * keeping the PAN. The first 16 bytes of the digest as hex, a slice of the whole digest's text:
   * most requests only look their card up by it (state/compact's `knownCard`); whatever keeps it
   * keeps a copy (`cardData`, `internCard`), so no card keeps the digest alive.
   */
  fingerprint(pan: string, controlKey: string): string {
    const input = `${this.fingerprintSalt}\u0000${controlKey}\u0000${pan}`
    // crypto.hash (Node 20.12+) is one native call (older lines fall back), as hex: a Buffer digest
    // cost ~1 µs more, and a flat copy made here through a shared buffer ~0.3 µs per sale.
    const hex = typeof nodeCrypto.hash === "function" ? nodeCrypto.hash("sha256", input, "hex") : nodeCrypto.createHash("sha256").update(input).digest("hex")
    return hex.slice(0, 32)
  }

  /** A new opaque id for card refs and recurring payments. */
  newRefId(prefix: string): string {
    return `${prefix}${String(this.nextRef++).padStart(8, "0")}${nodeCrypto.randomBytes(4).toString("hex")}`
  }

  /** Appends a transaction and makes it the order's current status. */
  addTx(order: Order, type: string, status: Status, amount?: bigint): Transaction {
    // One object shape per kind of transaction (amount or not), all fields in the object itself.
    const tx: Transaction = amount === undefined
      ? { type, status, serialNumber: serialNumber(), at: this.clock.now() }
      : { type, status, amount, serialNumber: serialNumber(), at: this.clock.now() }
    const list = order.transactions
    // An empty array grows to 17 slots on its first push; orders have one to a few transactions.
    if (list.length === 0) (order as { transactions: Transaction[] }).transactions = [tx]
    else list.push(tx)
    order.status = status
    return tx
  }

  /**
   * Accepts a money operation: reserves it in the order's ledger (a refusal is thrown as the 400 of
   * its error-code) and appends its transaction, processing. `requested` is the amount sent.
   */
  accept(order: Order, op: LedgerOp, type: string, requested?: bigint): Transaction {
    const reservation = reserve(order.ledger, op, order.transactions.length, requested, (m) => `${this.format(m, order.currency)} ${order.currency}`)
    if (!reservation.ok) throw refusalError(reservation.refusal, order.clientOrderId)
    this.applyLedger(order, reservation.ledger, `accept ${op}`)
    const amount = reservation.entry.amount
    return this.addTx(order, type, "processing", amount > 0n || requested !== undefined ? amount : undefined)
  }

  /** Commits (approved) or releases (anything else) the ledger entry of `tx`, if it has one. */
  recordOutcome(order: Order, tx: Transaction, approved: boolean): void {
    const index = order.transactions.indexOf(tx)
    if (!hasEntry(order.ledger, index)) return
    let next: Ledger
    try {
      next = approved ? commit(order.ledger, index) : release(order.ledger, index)
    } catch (error) {
      this.violations.push({ orderid: order.orderid, invariant: "entry-finished-once", detail: String((error as Error).message), during: `finalize ${tx.type}`, at: this.clock.now() })
      throw error
    }
    this.applyLedger(order, next, `finalize ${tx.type}`)
  }

  /**
   * Replaces an order's ledger after checking every invariant on the new one. A violation is a
   * simulator bug: it is recorded (`sim.checkInvariants()`) and thrown, and the change is not applied.
   */
  applyLedger(order: Order, next: Ledger, during: string): void {
    const broken = checkInvariants(next)
    if (broken.length > 0) {
      const at = this.clock.now()
      for (const v of broken) this.violations.push({ orderid: order.orderid, ...v, during, at })
      throw new Error(`ledger invariant broken on order ${order.orderid} during ${during}: ${broken.map((v) => v.invariant).join(", ")}`)
    }
    order.ledger = next
  }

  /** Recorded violations plus a fresh check of every order's ledger. */
  checkAllInvariants(): InvariantViolation[] {
    const now = this.clock.now()
    const fresh = this.store.all().flatMap((order) => checkInvariants(order.ledger).map((v) => ({ orderid: order.orderid, ...v, during: "check", at: now })))
    return [...this.violations, ...fresh]
  }

  /**
   * Schedules the final status of `tx` after the processing delay (10 simulated minutes for the
   * slow test card), unless something else (a 3DS result, a form) has decided it by then.
   */
  scheduleFinal(order: Order, tx: Transaction, outcome: Outcome): void {
    const delay = outcome === "slow-approved" ? SLOW_CARD_DELAY_MS : this.processingDelayMs
    this.scheduleFinalWith(order, tx, finalOf(outcome), delay)
  }

  /** Schedules a known final result after `delay` (default: the processing delay). */
  scheduleFinalWith(order: Order, tx: Transaction, final: Final, delay = this.processingDelayMs): void {
    this.schedule(this.clock.now() + delay, { kind: "finalize", orderid: order.orderid, tx: order.transactions.indexOf(tx), final })
  }

  /** Queues a pending job on the clock: the record only; the clock hands it back to {@link Engine.runJob}. */
  schedule(at: number, job: PendingJob): void {
    if (job.kind === "callback") this.callbacks.schedule(at, job.callback, job.attempt)
    else this.clock.schedule(at, job)
  }

  /** Does the work a pending job describes. */
  runJob(job: Exclude<PendingJob, CallbackJobRecord>, at: number): void {
    switch (job.kind) {
      case "finalize": {
        const order = this.store.get(job.orderid)
        const tx = order?.transactions[job.tx]
        if (order !== undefined && tx !== undefined && tx.status === "processing") this.finalize(order, tx, job.final)
        return
      }
      case "settle": {
        const order = this.store.get(job.orderid)
        if (order === undefined) return
        const first = !order.ledger.settled
        this.applyLedger(order, settle(order.ledger), "settle")
        // Captures settle one by one; the chargeback card is charged back once, counted from the first.
        if (first && order.outcome === "chargeback") this.schedule(at + CHARGEBACK_DELAY_MS, { kind: "chargeback", orderid: order.orderid })
        return
      }
      case "chargeback": {
        const order = this.store.get(job.orderid)
        // Refunded or voided by then: there is nothing to charge back, as at the gateway.
        if (order !== undefined) this.chargeback(order)
        return
      }
      case "recurring-charge":
        this.recurringCharge(this, job.recurringPaymentId, at)
        return
    }
  }

  /** Sets a transaction's final status, then settlement and the callback follow. */
  finalize(order: Order, tx: Transaction, final: Final): void {
    this.recordOutcome(order, tx, final.status === "approved")
    tx.status = final.status
    if (order.transactions[order.transactions.length - 1] === tx) order.status = final.status
    if (order.transactions[0] === tx) {
      if (final.errorCode === undefined) delete order.errorCode
      else order.errorCode = final.errorCode
      if (final.errorMessage === undefined) delete order.errorMessage
      else order.errorMessage = final.errorMessage
    }
    if (final.status === "approved" && (tx.type === "sale" || tx.type === "rebill" || tx.type === "capture")) {
      this.schedule(this.clock.now() + this.settlementDelayMs, { kind: "settle", orderid: order.orderid })
    }
    this.sendCallback(order, tx, final)
  }

  /**
   * Charges back `amount` (minor units; default everything captured and not yet returned or charged
   * back) of a settled order now, through the ledger's `chargeback` rule: an approved `chargeback`
   * transaction and its callback (`type=chargeback`). Refuses, naming why, an order that is not an
   * approved charge, is voided, is not settled, or has nothing left to charge back.
   */
  chargeback(order: Order, amount?: bigint): ChargebackResult {
    const ledger = order.ledger
    const no = (reason: ChargebackRefusal, message: string): ChargebackResult => ({ ok: false, reason, message })
    if (ledger.kind !== "sale" && ledger.kind !== "rebill" && ledger.kind !== "preauth") return no("not-a-charge", `orderid: a ${order.kind} order cannot be charged back`)
    const totals = totalsOf(ledger)
    if (holds("original-not-approved", ledger, totals)) return no("not-approved", "orderid: the order's payment is not approved")
    if (holds("voided", ledger, totals)) return no("voided", "orderid: the order is voided")
    if (holds("not-settled", ledger, totals)) return no("not-settled", "orderid: the order is not settled yet")
    const open = limitOf("refundable", totals)
    if (open === 0n) return no("fully-refunded", "orderid: nothing left to charge back: the order is fully refunded or charged back")
    if (amount !== undefined && (amount <= 0n || amount > open)) {
      return no("exceeds-refundable", `amount: must be more than 0 and at most ${this.format(open, order.currency)} ${order.currency} (captured, not returned or charged back)`)
    }
    const tx = this.accept(order, "chargeback", "chargeback", amount ?? open)
    this.finalize(order, tx, { status: "approved" })
    return { ok: true, tx }
  }

  /** Queues the server callback of a final transaction, when the order has a callback URL. */
  sendCallback(order: Order, tx: Transaction, final: Final): void {
    const url = order.serverCallbackUrl
    if (url === undefined) return
    const index = order.transactions.indexOf(tx)
    const fields: Record<string, string> & { status: string; orderid: string; client_orderid: string } = {
      status: final.status,
      orderid: order.orderid,
      merchant_order: order.clientOrderId,
      client_orderid: order.clientOrderId,
      type: callbackType(tx.type),
      amount: this.format(tx.amount ?? order.amount, order.currency),
      currency: order.currency
    }
    if (final.errorCode !== undefined) fields["error_code"] = final.errorCode
    if (final.errorMessage !== undefined) fields["error_message"] = final.errorMessage
    if (order.email !== undefined) fields["email"] = order.email
    if (order.card !== undefined) {
      fields["bin"] = order.card.bin
      fields["last-four-digits"] = order.card.last4
      fields["card-type"] = order.card.brand
      if (order.card.holder !== undefined) fields["name"] = order.card.holder.slice(0, 128)
    }
    // Per-transaction fields (decision 11): two partial returns of equal amount must differ, so
    // receivers can dedupe exact redeliveries without merging distinct transactions.
    fields["approval-code"] = approvalCode(order.orderid, index)
    fields["processor-rrn"] = processorRrn(order.orderid, index)
    fields["descriptor"] = "PAYKIT SIMULATOR"
    if (order.merchantData !== undefined) fields["merchantdata"] = order.merchantData
    this.clock.track(this.callbacks.send({ url, login: order.login, controlKey: this.callbackKeyOf(order), operation: order.operation, fields }))
  }

  /** What a request does first: run the work that fell due, then apply the retention policy. */
  tick(): void {
    this.clock.runDue()
    this.retention.maybePrune(this, this.clock.now())
  }

  /** Forgets all state except the clock's time. */
  reset(): void {
    this.clock.clear()
    this.store.clear()
    this.faults.clear()
    this.callbacks.clear()
    this.oauth = this.newVerifier()
    this.cardRefs.clear()
    this.cardRefByOrder.clear()
    this.recurring.clear()
    this.violations.length = 0
  }
}

/** The 400 of a ledger refusal; codes the spec does not list (internal ones) are a 500. */
function refusalError(refusal: Refusal, clientOrderId: string): SimError {
  const code = Object.prototype.hasOwnProperty.call(errorCodes, refusal.code) ? (refusal.code as ErrorCode) : "internal-error"
  return new SimError(code, refusal.message, clientOrderId)
}
