/**
 * Merchant retries as replays: every money-moving call runs under an idempotency key, and this
 * ledger remembers what became of it.
 *
 * - A key whose call succeeded replays that result; a call with the key still running is joined
 *   (the second caller waits for the first send instead of sending again).
 * - A key whose outcome stayed unknown is resumed: the next call with it reconciles against the
 *   order as it was before the first send, and sends only when that proves nothing was applied.
 * - A key whose call provably applied nothing (a refusal, a failure before sending, an order seen
 *   unchanged after the processing window) is forgotten: calling again simply sends.
 * - Without a key, an identical call (same operation, endpoint and fields) that is running or
 *   unknown is joined or resumed the same way, so a double click or a blind retry cannot apply a
 *   capture twice; once a call has succeeded, an identical keyless call is a new, deliberate one.
 *
 * This module is the in-memory ledger (one process). Its interface is what a shared store adapter
 * implements for a fleet.
 *
 * @packageDocumentation
 */
import * as nodeCrypto from "node:crypto"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { whenAborted } from "../transport/when-aborted"
import { OutcomeUnknown, type ReconcileError, type StatusSnapshot } from "../errors"
import type { StoreError, StoreInputError } from "../store/types"
import { makeOrderLocks, type OrderLocks } from "./order-locks"
import { reopens } from "./verdicts"

/** One call's intent. */
export interface CallIntent {
  readonly key: string
  readonly fingerprint: string
  state: "running" | "unknown" | "done"
  /** The order before the first send (calls on an existing order). */
  before: StatusSnapshot | undefined
  /** When (ms, the Effect clock) the last send whose outcome is unknown ended. */
  unknownSince: number | undefined
  /** `_tag` of the failure that made the outcome unknown. */
  lastError: string | undefined
  /** Taken over from another instance: the order as it was before that instance's send is not known. */
  beforeLost?: boolean | undefined
  /** With a shared store: the intent's `attempts` when this call got it (its fencing token for `recordBefore`). */
  storeAttempt?: number | undefined
  /**
   * In this process, for a call on an existing order: how many sends this client had made on the
   * order (`track.sends`, by any call) when this call last ended. A resumed call finding more can no
   * longer tell its own money from another call's in the order's figures.
   */
  orderSends?: { readonly track: { sends: number }; readonly at: number } | undefined
  /**
   * In this process: another call's send on the order was out between this call's snapshot and its
   * proof, so the order's figures may mix that call's money with this one's and prove nothing.
   */
  beforeMixed?: boolean | undefined
  /**
   * When the first send under the key started, at the earliest (the caller's clock): the gateway
   * may have created or moved an order from then on, so `order-not-found` proves "never sent" only
   * while an order made then would still be kept.
   */
  firstSendAt?: number | undefined
  /** With a shared store: the store recorded when this holder's sends end by as it recorded the intent (its first send needs no fence). */
  sendsRecorded?: boolean | undefined
  /** With a shared store: the call's deadline (epoch ms, the Effect clock), which bounds its store steps. */
  deadlineAt?: number | undefined
  /** With a shared store: the call's processing window (ms), which its lease covers beyond the deadline. */
  windowMs?: number | undefined
  /** Completed with the call's exit; joiners wait on it. */
  readonly done: Deferred.Deferred<unknown, ReconcileError>
  exit: Exit.Exit<unknown, ReconcileError> | undefined
}

/** What a store records about a call (no card data). */
export interface IntentMeta {
  /** The operation id (`SALE`, `CAPTURE`, ...). */
  readonly operation: string
  /** The client method (for error messages). */
  readonly method: string
  readonly client_orderid: string
  readonly orderid?: string | undefined
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  /** The endpoint or endpoint group the call goes to. */
  readonly endpoint: string
}

/** What `begin` found under a key or fingerprint. */
export type Begin =
  | { readonly _tag: "Fresh"; readonly intent: CallIntent }
  | { readonly _tag: "Resume"; readonly intent: CallIntent }
  | { readonly _tag: "Join"; readonly intent: CallIntent }
  | { readonly _tag: "Replay"; readonly exit: Exit.Exit<unknown, ReconcileError> }
  | { readonly _tag: "KeyReused" }

/**
 * One call this client made on an existing order, as the callback handler needs it: the operation
 * and, once its reply came back, the `serial-number` that reply carried (what `status` with
 * `by-request-sn` looks the transaction up by).
 */
export interface OrderCall {
  /** The operation id (`CAPTURE`, `RETURN`, `VOID`, ...). */
  readonly operation: string
  /** The reply's `serial-number`; absent while the call runs, after an unknown outcome or a reconciled one. */
  readonly serialNumber: string | undefined
  /**
   * `true` while the call may still learn its `serial-number` (a send of it may be out). A call that
   * ended without one never learns it later: reconciliation proves a landed call from the order's
   * figures, not from its transaction, and a resumed call that sends again makes a new transaction.
   */
  readonly running: boolean
}

/** What bounds a call's wait for a key another instance holds: the call's own deadline and signal. */
export interface BeginBound {
  /** The call's overall limit, in ms from now. */
  readonly deadlineMs: number
  /** The call's processing window (ms after a send before an unchanged order proves it did not land): its lease covers it beyond the deadline. */
  readonly windowMs?: number | undefined
  /** The caller's signal. */
  readonly signal?: AbortSignal | undefined
}

/** The ledger a client runs money-moving calls through. */
export interface IntentLedger {
  /**
   * Claims `key` (or, without one, looks for an identical running or unknown call first). A wait for
   * another instance's intent ends with the call's deadline or signal (`OutcomeUnknown`: that
   * instance may have sent it).
   */
  readonly begin: (key: string | undefined, fingerprint: string, meta: IntentMeta, bound?: BeginBound) => Effect.Effect<Begin, StoreError | StoreInputError | OutcomeUnknown>
  /**
   * Makes `intent.before` durable before the first send of a call on an existing order (a shared
   * store keeps it with the intent, so `recover()` on another instance can prove the outcome). Fails
   * when the call no longer holds its intent: it must not send then.
   */
  readonly recordBefore: (intent: CallIntent) => Effect.Effect<void, StoreError | StoreInputError>
  /**
   * Records how a call ended: a success or a final failure replays, an unknown outcome resumes, a
   * failure that moved nothing is forgotten (`intents/verdicts.ts`).
   */
  readonly finish: (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean) => Effect.Effect<void>
  /**
   * Before a resend: whether the call still holds its intent (with a store: its fencing token is
   * current, and its lease and the time its sends end by move with the resend). `false`: it must not send.
   */
  readonly beforeResend: (intent: CallIntent) => Effect.Effect<boolean, StoreError | StoreInputError>
  /** How calls on one order run one at a time (docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet): in this process, or through the store's order leases. */
  readonly orders: OrderLocks
  /** The calls this client made on the order `orderid` of `client_orderid` (every state), oldest first. */
  readonly callsOn: (order: { readonly client_orderid: string; readonly orderid: string }) => Effect.Effect<ReadonlyArray<OrderCall>, StoreError | StoreInputError>
  /**
   * The same `begin` and `finish` as plain functions, for a ledger that needs no I/O (the in-memory
   * one): the pipeline's Promise-native first attempt uses them instead of running the Effects. A
   * ledger over a store has none, and its calls take the Effect pipeline.
   */
  readonly sync?: SyncIntentLedger | undefined
  /**
   * A ledger over a store: `begin` and the success half of `finish` as Promises, for the same
   * Promise-native first attempt (`call/pipeline.ts`), so a call whose first send ends in the
   * typed reply runs no fiber either.
   */
  readonly promise?: PromiseIntentLedger | undefined
}

/** {@link IntentLedger}'s `begin` and a success's `finish` as Promises, for a ledger whose writes are I/O. */
export interface PromiseIntentLedger {
  /**
   * `begin`, resolving once the store has decided: a `Fresh` intent is recorded in the store before
   * it resolves. Rejects with the call's typed failure (keyed), as `begin`'s Effect fails.
   */
  readonly begin: (key: string | undefined, fingerprint: string, meta: IntentMeta, bound: BeginBound) => Begin | Promise<Begin>
  /**
   * `finish` for a call that returned `result`: in this process at once (joiners and replays get a
   * copy), in the store before it resolves. Never rejects: a failed write is logged, as `finish` does.
   */
  readonly succeed: (intent: CallIntent, result: Record<string, unknown>) => Promise<void>
}

/**
 * A copy of a call's result that shares no object with it: replies are flat records of strings, a
 * reconciled result carries nested snapshots. Only plain objects and arrays are copied; anything else
 * (strings, numbers, class instances) is shared as it is.
 */
export function detachedResult<A>(value: A): A {
  if (Array.isArray(value)) return value.map(detachedResult) as A
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value
  // A spread copies a flat record in one step (the copy takes the original's shape); only the
  // values that are objects themselves are copied again.
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  for (const k in copy) {
    const v = copy[k]
    if (typeof v === "object" && v !== null) copy[k] = detachedResult(v)
  }
  return copy as A
}

/** The `_tag` of a failed call's error (`Interrupted` for a cause with no typed failure). */
export function failureTag(exit: Exit.Exit<unknown, ReconcileError>): string {
  return Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : "Interrupted"
}

/** The `serial-number` of a successful call's result, when it has one. */
export function serialNumberOf(value: unknown): string | undefined {
  const sn = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["serial-number"] : undefined
  return typeof sn === "string" && sn !== "" ? sn : undefined
}

/** {@link IntentLedger}'s `begin` and `finish` when they cannot fail and do no I/O. */
export interface SyncIntentLedger {
  readonly begin: (key: string | undefined, fingerprint: string, meta?: IntentMeta) => Begin
  readonly finish: (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean) => void
}

// `crypto.hash` (Node 20.12+) hashes in one native call without a Hash object; older lines fall back.
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string }).hash
const sha256Hex: (text: string) => string = typeof oneShot === "function"
  ? (text) => oneShot("sha256", text, "hex")
  : (text) => nodeCrypto.createHash("sha256").update(text).digest("hex")

/**
 * A stable, non-reversible fingerprint of a request (card data never kept in clear). `names`, when
 * given, are every field name the request can have, sorted as `Array.prototype.sort` does: the
 * names present are then taken in that order without sorting the request's own keys (the same
 * digest, as long as `values` has no other field).
 */
export function fingerprintOf(operation: string, endpointId: string, values: Readonly<Record<string, string>>, names?: ReadonlyArray<string>): string {
  // The same bytes as one update per piece, hashed in one native call (the digest is unchanged).
  let text = `${operation}\u0000${endpointId}`
  if (names === undefined) {
    for (const k of Object.keys(values).sort()) text += `\u0000${k}=${values[k]!}`
  } else {
    // Each name's `\0name=` made once per operation: building the text was half the fingerprint.
    const prefixes = prefixesOf(names)
    for (let i = 0; i < names.length; i++) {
      const value = values[names[i]!]
      if (value !== undefined || names[i]! in values) text += prefixes[i]! + value
    }
  }
  return sha256Hex(text)
}

// `\0name=` per field name, by names list (one per operation; the last one looked up kept apart).
const prefixCache = new WeakMap<ReadonlyArray<string>, ReadonlyArray<string>>()
let lastNames: ReadonlyArray<string> | undefined
let lastPrefixes: ReadonlyArray<string> = []
function prefixesOf(names: ReadonlyArray<string>): ReadonlyArray<string> {
  if (names === lastNames) return lastPrefixes
  let prefixes = prefixCache.get(names)
  if (prefixes === undefined) prefixCache.set(names, prefixes = names.map((k) => `\u0000${k}=`))
  lastNames = names
  lastPrefixes = prefixes
  return prefixes
}

/** A fresh idempotency key. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID()
}

// Joiners wait on an intent's Deferred from their own fibers; none is needed to make it.
const deferred = () => Deferred.unsafeMake<unknown, ReconcileError>(FiberId.none)

/**
 * The in-memory ledger's intent. Its `done` is made only when someone joins (making a Deferred
 * costs more than the rest of `begin`, and almost no call is joined); one made after the call
 * ended is completed at once with the call's exit.
 */
class MemoryIntent implements CallIntent {
  state: CallIntent["state"] = "running"
  before: StatusSnapshot | undefined = undefined
  unknownSince: number | undefined = undefined
  lastError: string | undefined = undefined
  beforeLost?: boolean | undefined
  storeAttempt?: number | undefined
  orderSends?: CallIntent["orderSends"]
  beforeMixed?: boolean | undefined
  sendsRecorded?: boolean | undefined
  firstSendAt?: number | undefined
  deadlineAt?: number | undefined
  windowMs?: number | undefined
  exit: Exit.Exit<unknown, ReconcileError> | undefined = undefined
  private joined: Deferred.Deferred<unknown, ReconcileError> | undefined = undefined
  private ended: Exit.Exit<unknown, ReconcileError> | undefined = undefined
  constructor(readonly key: string, readonly fingerprint: string) {}

  get done(): Deferred.Deferred<unknown, ReconcileError> {
    if (this.joined === undefined) {
      this.joined = deferred()
      if (this.ended !== undefined) Deferred.unsafeDone(this.joined, this.ended)
    }
    return this.joined
  }

  /** Completes `done` (now or when it is made); as a Deferred's, the first completion wins. */
  end(exit: Exit.Exit<unknown, ReconcileError>): void {
    if (this.ended !== undefined) return
    this.ended = exit
    if (this.joined !== undefined) Deferred.unsafeDone(this.joined, exit)
  }
}

/**
 * A succeeded key as the in-memory ledger keeps it for replay: the request's fingerprint and the
 * ledger's own copy of the result, nothing more (the key is the table's). Up to `maxDone` of them
 * live for thousands of calls, so each outlives the young generation, and every object a record
 * holds is one more for the garbage collector to copy and mark on each call.
 */
class Succeeded {
  constructor(readonly fingerprint: string, readonly result: unknown) {}
}

/**
 * The in-memory ledger. `maxDone` bounds how many succeeded keys are kept for replay (oldest dropped
 * first); `maxOrders` how many orders' calls are kept for the callback handler (oldest order first).
 */
export function memoryIntentLedger(maxDone = 10_000, maxOrders = 100_000): IntentLedger {
  // The calls this ledger holds by key: running, unknown, or failed for good (they replay that
  // failure). Few at any time, so every call's own steps touch a small table.
  const intents = new Map<string, CallIntent>()
  // Succeeded keys' replay records, up to maxDone, and their keys in the order they succeeded (a
  // ring: the oldest is dropped as the newest comes). Apart from `intents`: a sale's begin and
  // finish never touch this table of thousands; its success adds one entry and drops one.
  const succeeded = new Map<string, Succeeded>()
  const succeededKeys: Array<string> = []
  let oldestAt = 0
  const keep = (key: string, record: Succeeded): void => {
    if (maxDone <= 0) return
    succeeded.set(key, record)
    if (succeededKeys.length < maxDone) {
      succeededKeys.push(key)
      return
    }
    // A key is in `succeeded` once at most (a begin with it replays), so the oldest slot's key is
    // that record's.
    succeeded.delete(succeededKeys[oldestAt]!)
    succeededKeys[oldestAt] = key
    oldestAt = oldestAt + 1 === maxDone ? 0 : oldestAt + 1
  }
  // orderid → the calls on it; key → its entry (to add the serial-number when the call ends). Kept
  // apart from the keys' records, which go after maxDone: a callback may come long after its call.
  const calls = new Map<string, Array<{ readonly key: string; readonly operation: string; serialNumber: string | undefined }>>()
  const callByKey = new Map<string, { readonly key: string; readonly operation: string; serialNumber: string | undefined }>()
  const noteCall = (key: string, meta: IntentMeta | undefined) => {
    if (meta?.orderid === undefined || callByKey.has(key)) return
    const entry = { key, operation: meta.operation, serialNumber: undefined }
    const list = calls.get(meta.orderid)
    if (list !== undefined) list.push(entry)
    else {
      calls.set(meta.orderid, [entry])
      if (calls.size > maxOrders) {
        const [oldest, dropped] = calls.entries().next().value!
        calls.delete(oldest)
        for (const e of dropped) callByKey.delete(e.key)
      }
    }
    callByKey.set(key, entry)
  }
  // Fingerprint → key of a running or unknown intent (keyless calls join or resume it).
  const open = new Map<string, string>()

  const isRunning = (key: string): boolean => intents.get(key)?.state === "running"

  const beginSync = (key: string | undefined, fingerprint: string, meta?: IntentMeta): Begin => {
    const existingKey = key ?? open.get(fingerprint)
    const record = key === undefined ? undefined : succeeded.get(key)
    if (record !== undefined) return record.fingerprint === fingerprint ? { _tag: "Replay", exit: Exit.succeed(record.result) } : { _tag: "KeyReused" }
    const existing = existingKey === undefined ? undefined : intents.get(existingKey)
    if (existing !== undefined) {
      if (existing.fingerprint !== fingerprint) return { _tag: "KeyReused" }
      if (existing.state === "done" && existing.exit !== undefined) return { _tag: "Replay", exit: existing.exit }
      if (existing.state === "running") return { _tag: "Join", intent: existing }
      // unknown: this call takes it over, with a fresh Deferred for whoever joins now.
      const resumed = new MemoryIntent(existing.key, fingerprint)
      resumed.before = existing.before
      resumed.unknownSince = existing.unknownSince
      resumed.lastError = existing.lastError
      if (existing.beforeLost !== undefined) resumed.beforeLost = existing.beforeLost
      if (existing.storeAttempt !== undefined) resumed.storeAttempt = existing.storeAttempt
      if (existing.orderSends !== undefined) resumed.orderSends = existing.orderSends
      if (existing.beforeMixed !== undefined) resumed.beforeMixed = existing.beforeMixed
      if (existing.firstSendAt !== undefined) resumed.firstSendAt = existing.firstSendAt
      intents.set(existing.key, resumed)
      open.set(fingerprint, existing.key)
      return { _tag: "Resume", intent: resumed }
    }
    const intent = new MemoryIntent(key ?? newIdempotencyKey(), fingerprint)
    intents.set(intent.key, intent)
    open.set(fingerprint, intent.key)
    noteCall(intent.key, meta)
    return { _tag: "Fresh", intent }
  }

  const finishSync = (intent: CallIntent, ended: Exit.Exit<unknown, ReconcileError>, unknown: boolean): void => {
    if (open.get(intent.fingerprint) === intent.key) open.delete(intent.fingerprint)
    // The ledger keeps its own copy of a result: the first caller's edits of its object never reach
    // what the key replays (each replay and joiner gets a copy of this one in turn).
    const exit = Exit.isSuccess(ended) ? Exit.succeed(detachedResult(ended.value)) : ended
    if (Exit.isSuccess(exit)) {
      intent.state = "done"
      intent.exit = exit
      const call = callByKey.get(intent.key)
      if (call !== undefined) call.serialNumber = serialNumberOf(exit.value)
      // The key now replays from its compact record; the intent itself goes with its call.
      if (intents.get(intent.key) === intent) {
        intents.delete(intent.key)
        keep(intent.key, new Succeeded(intent.fingerprint, exit.value))
      }
    } else if (unknown) {
      intent.state = "unknown"
      open.set(intent.fingerprint, intent.key)
    } else if (!reopens(failureTag(exit))) {
      // Money may have moved (a conflict found after a send): the key replays this failure for good.
      intent.state = "done"
      intent.exit = exit
    } else if (intents.get(intent.key) === intent) {
      intents.delete(intent.key)
    }
    if (intent instanceof MemoryIntent) intent.end(exit)
    else Deferred.unsafeDone(intent.done, exit)
  }

  return {
    begin: (key, fingerprint, meta) => Effect.sync(() => beginSync(key, fingerprint, meta)),
    finish: (intent, exit, unknown) => Effect.sync(() => finishSync(intent, exit, unknown)),
    recordBefore: () => Effect.void,
    beforeResend: () => Effect.succeed(true),
    orders: makeOrderLocks(),
    sync: { begin: beginSync, finish: finishSync },
    callsOn: (order) =>
      Effect.sync(() =>
        (calls.get(order.orderid) ?? []).map((c) => ({ operation: c.operation, serialNumber: c.serialNumber, running: isRunning(c.key) })))
  }
}

/**
 * Waits for the outcome of the call `intent` belongs to (a joined double click), within the joining
 * call's own deadline and signal: when either ends first, this caller gets `OutcomeUnknown` (the
 * call it joined is still running and may apply) and the running call goes on.
 */
export function awaitJoined(intent: CallIntent, meta: IntentMeta, bound: BeginBound): Effect.Effect<unknown, ReconcileError> {
  const stillRunning = () =>
    new OutcomeUnknown({
      operation: meta.method, client_orderid: meta.client_orderid, orderid: meta.orderid, lastError: "Joined",
      mayHaveApplied: true, statusBefore: intent.before, statusAfter: undefined, idempotencyKey: intent.key,
      next: "the same call is still running under this idempotencyKey: call again with it later (it replays that outcome, or reconciles)"
    })
  const joined = Deferred.await(intent.done).pipe(Effect.map(detachedResult), Effect.timeoutFail({ duration: Duration.millis(Math.max(0, bound.deadlineMs)), onTimeout: stillRunning }))
  return bound.signal === undefined ? joined : Effect.raceFirst(joined, whenAborted(bound.signal, stillRunning))
}
