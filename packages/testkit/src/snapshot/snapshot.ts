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
import type { CardData } from "../rules/cards"
import type { CallbackJob } from "../callbacks/sender"
import type { CardRef, Engine, PendingJob } from "../engine/engine"
import type { RecurringPayment } from "../state/refs"
import { StoredOrder, type Order } from "../state/orders"
import { intern, internCard } from "../state/compact"
import type { Bucket, Ledger } from "../ledger/index"
import { SNAPSHOT_VERSION, type SimulatorSnapshot, type SnapshotCard, type SnapshotJob, type SnapshotLedger, type SnapshotOrder } from "./format"

/** Optional string fields of an order, in the order they are restored. */
const OPTIONAL_STRINGS = ["errorCode", "errorMessage", "email", "redirectUrl", "serverCallbackUrl", "merchantData", "cardRefId", "recurringPaymentId"] as const
const card = (c: CardData): SnapshotCard => ({ ...c })

const mapMoves = <A, B>(moves: Readonly<Partial<Record<Bucket, A>>>, f: (a: A) => B): Partial<Record<Bucket, B>> =>
  Object.fromEntries(Object.entries(moves).map(([bucket, amount]) => [bucket, f(amount as A)]))

const ledgerOut = (l: Ledger): SnapshotLedger => ({
  kind: l.kind,
  settled: l.settled,
  entries: l.entries.map((e) => ({ tx: e.tx, op: e.op, amount: e.amount.toString(), moves: mapMoves(e.moves, String), state: e.state }))
})

const ledgerIn = (l: SnapshotLedger): Ledger => ({
  kind: l.kind,
  settled: l.settled,
  entries: l.entries.map((e) => ({ tx: e.tx, op: e.op, amount: BigInt(e.amount), moves: mapMoves(e.moves, BigInt), state: e.state }))
})

function orderOut(o: Order): SnapshotOrder {
  const { controlKey: _key, amount, card: c, transactions, threeDS, form, reply, ledger, ...rest } = o
  return {
    ...rest,
    amount: amount.toString(),
    ledger: ledgerOut(ledger),
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

/** Refuses anything that is not a snapshot of this version, with a message that says why. */
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
    const { amount, card: c, transactions, threeDS, form, reply, ledger, ...rest } = o
    const order = new StoredOrder({
      orderid: rest.orderid,
      clientOrderId: rest.clientOrderId,
      login: rest.login,
      controlKey: keyOf(o.login, `order ${o.orderid}`),
      endpointId: intern(String(rest.endpointId)),
      kind: rest.kind,
      operation: rest.operation,
      currency: intern(rest.currency),
      amount: BigInt(amount),
      amountText: intern(rest.amountText),
      status: rest.status,
      outcome: rest.outcome,
      ledger: ledgerIn(ledger),
      fingerprint: intern(rest.fingerprint),
      transactions: transactions.map(({ amount: a, ...t }) => (a === undefined ? { ...t } : { type: t.type, status: t.status, amount: BigInt(a), serialNumber: t.serialNumber, at: t.at })),
      createdAt: rest.createdAt
    })
    for (const key of OPTIONAL_STRINGS) {
      const value = rest[key]
      if (value !== undefined) order[key] = intern(value)
    }
    if (c !== undefined) order.card = internCard(cardIn(c))
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
    const rp: RecurringPayment = { ...r, endpointId: String(r.endpointId), amount: BigInt(r.amount), card: cardIn(r.card), orderFields: { ...r.orderFields } }
    engine.recurring.set(rp.id, rp)
  }
  engine.callbacks.restoreLog(snapshot.callbackAttempts)
  for (const job of snapshot.pendingJobs) {
    if (job.kind === "callback") {
      const callback: CallbackJob = {
        ...job.callback,
        // A pending callback is signed as its merchant signs callbacks (`callbackControlKey`).
        controlKey: engine.merchantByLogin(job.callback.login)?.callbackControlKey ?? keyOf(job.callback.login, "a callback"),
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
