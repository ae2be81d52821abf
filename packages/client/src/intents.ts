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
import { Deferred, Duration, Effect, Exit } from "effect"
import { whenAborted } from "./call-options"
import { OutcomeUnknown, type ReconcileError, type StatusSnapshot } from "./errors"
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

/** What bounds a call's wait for a key another instance holds: the call's own deadline and signal. */
export interface BeginBound {
  /** The call's overall limit, in ms from now. */
  readonly deadlineMs: number
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
  /** Records how a call ended: success replays, unknown resumes, anything else is forgotten. */
  readonly finish: (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean) => Effect.Effect<void>
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

/** The in-memory ledger. `maxDone` bounds how many succeeded keys are kept for replay (oldest dropped first). */
export function memoryIntentLedger(maxDone = 10_000): IntentLedger {
  const byKey = new Map<string, CallIntent>()
  // Fingerprint → key of a running or unknown intent (keyless calls join or resume it).
  const open = new Map<string, string>()
  let doneCount = 0

  const begin = (key: string | undefined, fingerprint: string, _meta?: IntentMeta): Effect.Effect<Begin> =>
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
        return { _tag: "Fresh", intent }
      })
    })

  const finish = (intent: CallIntent, exit: Exit.Exit<unknown, ReconcileError>, unknown: boolean): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (open.get(intent.fingerprint) === intent.key) open.delete(intent.fingerprint)
      if (Exit.isSuccess(exit)) {
        intent.state = "done"
        intent.exit = exit
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

  return { begin, finish, recordBefore: () => Effect.void }
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
  const joined = Deferred.await(intent.done).pipe(Effect.timeoutFail({ duration: Duration.millis(Math.max(0, bound.deadlineMs)), onTimeout: stillRunning }))
  return bound.signal === undefined ? joined : Effect.raceFirst(joined, whenAborted(bound.signal, stillRunning))
}
