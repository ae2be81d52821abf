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
import { createHash } from "node:crypto"
import { Deferred, Effect, Exit } from "effect"
import type { ReconcileError, StatusSnapshot } from "./errors"
import type { StoreError, StoreInputError } from "./store/types"

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
  beforeLost?: boolean
  /** With a shared store: the intent's `attempts` when this call got it (its fencing token for `recordBefore`). */
  storeAttempt?: number | undefined
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

/** The ledger a client runs money-moving calls through. */
export interface IntentLedger {
  /** Claims `key` (or, without one, looks for an identical running or unknown call first). */
  readonly begin: (key: string | undefined, fingerprint: string, meta: IntentMeta) => Effect.Effect<Begin, StoreError | StoreInputError>
  /**
   * Makes `intent.before` durable before the first send of a call on an existing order (a shared
   * store keeps it with the intent, so `recover()` on another instance can prove the outcome). Fails
   * when the call no longer holds its intent: it must not send then.
   */
  readonly recordBefore: (intent: CallIntent) => Effect.Effect<void, StoreError | StoreInputError>
  /** Records how a call ended: success replays, unknown resumes, anything else is forgotten. */
  readonly finish: (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean) => Effect.Effect<void>
  /** The calls this client made on the order `orderid` of `client_orderid` (every state), oldest first. */
  readonly callsOn: (order: { readonly client_orderid: string; readonly orderid: string }) => Effect.Effect<ReadonlyArray<OrderCall>, StoreError | StoreInputError>
}

/** The `serial-number` of a successful call's result, when it has one. */
export function serialNumberOf(value: unknown): string | undefined {
  const sn = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["serial-number"] : undefined
  return typeof sn === "string" && sn !== "" ? sn : undefined
}

/** A stable, non-reversible fingerprint of a request (card data never kept in clear). */
export function fingerprintOf(operation: string, endpointId: string, values: Readonly<Record<string, string>>): string {
  const keys = Object.keys(values).sort()
  // The same bytes as one update per piece, hashed in one native call (the digest is unchanged).
  let text = `${operation}\u0000${endpointId}`
  for (const k of keys) text += `\u0000${k}=${values[k]!}`
  return createHash("sha256").update(text).digest("hex")
}

/** A fresh idempotency key. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID()
}

/**
 * The in-memory ledger. `maxDone` bounds how many succeeded keys are kept for replay (oldest dropped
 * first); `maxOrders` how many orders' calls are kept for the callback handler (oldest order first).
 */
export function memoryIntentLedger(maxDone = 10_000, maxOrders = 100_000): IntentLedger {
  const byKey = new Map<string, CallIntent>()
  // orderid → the calls on it; key → its entry (to add the serial-number when the call ends). Kept
  // apart from byKey, whose done entries go after maxDone: a callback may come long after its call.
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
  let doneCount = 0

  const begin = (key: string | undefined, fingerprint: string, meta?: IntentMeta): Effect.Effect<Begin> =>
    Effect.suspend(() => {
      const existingKey = key ?? open.get(fingerprint)
      const existing = existingKey === undefined ? undefined : byKey.get(existingKey)
      if (existing !== undefined) {
        if (existing.fingerprint !== fingerprint) return Effect.succeed<Begin>({ _tag: "KeyReused" })
        if (existing.state === "done" && existing.exit !== undefined) return Effect.succeed<Begin>({ _tag: "Replay", exit: existing.exit })
        if (existing.state === "running") return Effect.succeed<Begin>({ _tag: "Join", intent: existing })
        // unknown: this call takes it over, with a fresh Deferred for whoever joins now.
        return Effect.map(Deferred.make<unknown, ReconcileError>(), (done): Begin => {
          const resumed: CallIntent = { ...existing, state: "running", done, exit: undefined }
          byKey.set(existing.key, resumed)
          open.set(fingerprint, existing.key)
          return { _tag: "Resume", intent: resumed }
        })
      }
      return Effect.map(Deferred.make<unknown, ReconcileError>(), (done): Begin => {
        const intent: CallIntent = {
          key: key ?? newIdempotencyKey(),
          fingerprint,
          state: "running",
          before: undefined,
          unknownSince: undefined,
          lastError: undefined,
          done,
          exit: undefined
        }
        byKey.set(intent.key, intent)
        open.set(fingerprint, intent.key)
        noteCall(intent.key, meta)
        return { _tag: "Fresh", intent }
      })
    })

  const finish = (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (open.get(intent.fingerprint) === intent.key) open.delete(intent.fingerprint)
      if (Exit.isSuccess(exit)) {
        intent.state = "done"
        intent.exit = exit
        const call = callByKey.get(intent.key)
        if (call !== undefined) call.serialNumber = serialNumberOf(exit.value)
        doneCount++
        // Map iteration is insertion order: the first done entries are the oldest.
        if (doneCount > maxDone) {
          for (const [k, v] of byKey) {
            if (v.state !== "done") continue
            byKey.delete(k)
            if (--doneCount <= maxDone) break
          }
        }
      } else if (unknown) {
        intent.state = "unknown"
        open.set(intent.fingerprint, intent.key)
      } else {
        byKey.delete(intent.key)
      }
      return Deferred.done(intent.done, exit)
    })

  const callsOn = (order: { readonly orderid: string }): Effect.Effect<ReadonlyArray<OrderCall>> =>
    Effect.sync(() =>
      (calls.get(order.orderid) ?? []).map((c) => ({ operation: c.operation, serialNumber: c.serialNumber, running: byKey.get(c.key)?.state === "running" })))

  return { begin, finish, recordBefore: () => Effect.void, callsOn }
}
