/**
 * Retention: which orders the simulator may forget, so a long-running `paykit-sim` under sustained
 * traffic holds bounded memory. Policy by count and by age on the simulator clock.
 *
 * An order is *final enough to forget* when forgetting it cannot change any money or any message
 * still to come:
 * - nothing of it is in flight: no transaction processing (3-D Secure and hosted-form waits
 *   included), no ledger reservation open;
 * - no server callback of it is queued for (re)delivery or under way (the retry schedule spans days);
 * - no scheduled chargeback still needs it: a finalize or chargeback job on the clock names it, or it
 *   is an order on the chargeback test card whose chargeback has not happened yet and still can
 *   (approved, not voided, something left to charge back; settlement schedules it).
 * Everything else about a final order is history. A pending settlement does not keep an order: its
 * money is committed, and settling only closes the void window; the settlement task of a forgotten
 * order is dropped with it. An approved preauth whose hold was never captured is final too (nothing
 * is in flight); it stays for `maxAgeMs` like any other order unless the count limit needs the room.
 *
 * A forgotten order is unknown: `status`, capture, void, return and the test routes answer exactly
 * as for an orderid that never existed (`order-not-found`), and its client_orderid can be used
 * again. The ledger invariants are checked over the orders kept; a forgotten order's ledger was final
 * and valid when it went. Orderids are never reused.
 *
 * @packageDocumentation
 */
import { holds, limitOf, totalsOf } from "../ledger/index"
import type { Order, OrderStore } from "./orders"

/** How many final orders to keep, and for how long (simulator clock) after their last transaction. */
export interface RetentionPolicy {
  /**
   * Final orders beyond this count are forgotten, oldest first (orders still in flight are kept
   * whatever the count). Default {@link DEFAULT_RETENTION}.maxOrders; `Infinity` keeps every order.
   */
  readonly maxOrders?: number
  /**
   * A final order whose last transaction is older than this, in simulator-clock ms, is forgotten.
   * Default {@link DEFAULT_RETENTION}.maxAgeMs; `Infinity` never forgets by age.
   */
  readonly maxAgeMs?: number
}

/**
 * The defaults keep a day of a busy sandbox: 200,000 orders is a day at 2.3 orders/s around the
 * clock (under 200 MB of heap at the ≤ 1 KB per order the simulator keeps). By age, a final order
 * stays 120 days after its last transaction: the card networks' chargeback window, so an order can
 * still be charged back, refunded or looked up for as long as a real one could be disputed.
 */
export const DEFAULT_RETENTION: Readonly<Required<RetentionPolicy>> = { maxOrders: 200_000, maxAgeMs: 120 * 24 * 60 * 60 * 1000 }

/** Checks and completes a policy; a bad value throws a TypeError naming the field and the rule. */
function retentionOf(policy: RetentionPolicy | undefined): Required<RetentionPolicy> {
  const maxOrders = policy?.maxOrders ?? DEFAULT_RETENTION.maxOrders
  const maxAgeMs = policy?.maxAgeMs ?? DEFAULT_RETENTION.maxAgeMs
  if (typeof maxOrders !== "number" || !(maxOrders === Number.POSITIVE_INFINITY || (Number.isInteger(maxOrders) && maxOrders >= 1))) {
    throw new TypeError(`retention.maxOrders: must be an integer of at least 1, or Infinity (got ${String(maxOrders)})`)
  }
  if (typeof maxAgeMs !== "number" || Number.isNaN(maxAgeMs) || maxAgeMs < 0) {
    throw new TypeError(`retention.maxAgeMs: must be a number of milliseconds of at least 0, or Infinity (got ${String(maxAgeMs)})`)
  }
  return { maxOrders, maxAgeMs }
}

/** When the order last changed: its last transaction, or its creation. */
function lastActivity(order: Order): number {
  const txs = order.transactions
  return txs.length === 0 ? order.createdAt : txs[txs.length - 1]!.at
}

/** Whether nothing of `order` is in flight and no chargeback of the chargeback card still waits for it. */
function finalEnough(order: Order): boolean {
  if (order.status === "processing") return false
  for (const tx of order.transactions) if (tx.status === "processing") return false
  for (const entry of order.ledger.entries) if (entry.state === "in-flight") return false
  const ledger = order.ledger
  if (order.outcome === "chargeback" && (ledger.kind === "sale" || ledger.kind === "rebill" || ledger.kind === "preauth")) {
    const chargedBack = ledger.entries.some((e) => e.op === "chargeback" && e.state !== "released")
    if (!chargedBack && !holds("original-not-approved", ledger) && !holds("voided", ledger) && limitOf("refundable", totalsOf(ledger)) > 0n) return false
  }
  return true
}

/**
 * The orders to forget now, oldest first: beyond `target` in count, or older than `cutoff` (last
 * transaction at or before it), when final enough and not `pinned` (named by pending work).
 * `orders` iterates oldest first; the scan stops at the first order created after the cutoff once
 * the count is met, so a sweep costs the old orders, not the whole store.
 */
function selectForgettable(orders: Iterable<Order>, size: number, target: number, cutoff: number, pinned: ReadonlySet<string>): Order[] {
  const out: Order[] = []
  for (const order of orders) {
    const over = size - out.length > target
    if (!over && order.createdAt > cutoff) break
    if (!over && lastActivity(order) > cutoff) continue
    if (!pinned.has(order.orderid) && finalEnough(order)) out.push(order)
  }
  return out
}

/** The parts of the simulator a prune touches (the engine; structural, so this module imports none of it). */
interface RetentionTarget {
  readonly store: OrderStore
  readonly cardRefByOrder: Map<string, string>
  readonly clock: {
    forEachJob(f: (job: unknown) => void): void
    dropJobs(drop: (job: unknown) => boolean): void
  }
  readonly callbacks: {
    inFlight(): ReadonlyArray<{ readonly job: { readonly fields: { readonly orderid: string } } }>
    forgetOrders(orderids: ReadonlySet<string>): void
  }
}

/** A job record as far as retention reads it. */
type JobRecord = { readonly kind: string; readonly orderid?: string; readonly callback?: { readonly fields: { readonly orderid: string } } }

/** The policy of one simulator and when it next applies. */
export class Retention {
  readonly maxOrders: number
  readonly maxAgeMs: number
  /** How far below `maxOrders` a count prune goes, so it runs once per batch of new orders, not per request. */
  private readonly batch: number
  /** A count prune that could not get below the limit (orders in flight) waits until the store reaches this size. */
  private countBlockedUntil = 0
  /** Simulator time of the next sweep by age. */
  private nextAgeSweep = 0
  /** Orders forgotten so far by this simulator. */
  forgotten = 0

  constructor(policy: RetentionPolicy | undefined) {
    const { maxOrders, maxAgeMs } = retentionOf(policy)
    this.maxOrders = maxOrders
    this.maxAgeMs = maxAgeMs
    // A sixteenth of the limit (none for limits under 16, where a prune per request costs nothing).
    this.batch = Number.isFinite(maxOrders) ? Math.min(Math.floor(maxOrders / 16), 65_536) : 0
  }

  /** Prunes when the store is over the count limit, or a sweep by age is due; cheap otherwise. */
  maybePrune(target: RetentionTarget, now: number): void {
    const size = target.store.size
    const byCount = size > this.maxOrders && size >= this.countBlockedUntil
    const byAge = this.maxAgeMs !== Number.POSITIVE_INFINITY && now >= this.nextAgeSweep
    if (byCount || byAge) this.prune(target, now)
  }

  /**
   * Forgets the orders the policy lets go: their indexes, their card-ref link, their callback log and
   * their settlement task. Returns how many.
   */
  prune(target: RetentionTarget, now: number): number {
    const pinned = new Set<string>()
    target.clock.forEachJob((job) => {
      const j = job as JobRecord
      if ((j.kind === "finalize" || j.kind === "chargeback") && j.orderid !== undefined) pinned.add(j.orderid)
      else if (j.kind === "callback" && j.callback !== undefined) pinned.add(j.callback.fields.orderid)
    })
    for (const flight of target.callbacks.inFlight()) pinned.add(flight.job.fields.orderid)
    const store = target.store
    const size = store.size
    const goal = size > this.maxOrders ? this.maxOrders - this.batch : size
    const gone = selectForgettable(store.values(), size, goal, now - this.maxAgeMs, pinned)
    const ids = new Set<string>()
    for (const order of gone) {
      store.delete(order)
      target.cardRefByOrder.delete(order.orderid)
      ids.add(order.orderid)
    }
    if (ids.size > 0) {
      target.callbacks.forgetOrders(ids)
      target.clock.dropJobs((job) => {
        const j = job as JobRecord
        return j.kind === "settle" && j.orderid !== undefined && ids.has(j.orderid)
      })
    }
    this.forgotten += ids.size
    this.countBlockedUntil = store.size > this.maxOrders ? store.size + Math.max(this.batch, 1) : 0
    this.nextAgeSweep = now + Math.min(this.maxAgeMs / 64, 60_000)
    return ids.size
  }
}
