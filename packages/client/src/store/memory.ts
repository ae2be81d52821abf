/**
 * The memory adapter: the store's semantics over Maps in one process (the default in tests and for
 * a single process that needs no durability). Every method runs synchronously to completion before
 * it resolves, so each is atomic in the one JavaScript thread; nothing is shared between processes.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreBackend } from "./backend"
import { migrations } from "./migrations"
import { conflictingFields, leaseExpired, outcomeRefused } from "./rules"
import { makePayStore, openStore, PayStore, type PayStoreHandle, type StoreOptions } from "./service"
import type { CallbackClaim, Intent, IntentOutcome, OrderLeaseResult, PurgeReport, RecordIntentResult, RecordOutcomeResult } from "./types"

/** A callback claim as the memory adapter holds it. */
export interface CallbackRow {
  owner: string
  leaseUntil: number
  attempts: number
  completedAt: number | undefined
}

/** An order's lease as the memory adapter holds it. */
export interface OrderLeaseRow {
  holderKey: string
  owner: string
  token: number
  leaseUntil: number
}

/** A memory backend, plus a look at everything it holds (for tests and debugging). */
export interface MemoryBackend extends StoreBackend {
  /** Copies of every intent, callback claim and nonce held. */
  readonly snapshot: () => { intents: Array<Intent>; callbacks: Array<CallbackRow & { hash: string }>; nonces: Array<[string, number]> }
}

/** Builds a memory backend (state lives as long as the object). */
export function memoryBackend(): MemoryBackend {
  const intents = new Map<string, Intent>()
  // client_orderid → idempotency keys (what `intentsOfOrder` reads; the SQL adapters have an index).
  // (A lone key is kept as itself, a Set only from the second: almost every order has one intent,
  // and a Set per payment was most of what this store allocated.)
  const byOrder = new Map<string, string | Set<string>>()
  const keysOf = (clientOrderId: string): ReadonlyArray<string> => {
    const keys = byOrder.get(clientOrderId)
    return keys === undefined ? [] : typeof keys === "string" ? [keys] : [...keys]
  }
  const callbacks = new Map<string, CallbackRow>()
  const nonces = new Map<string, number>()
  const orderLeases = new Map<string, OrderLeaseRow>()
  // One counter for every order: a token is never handed out twice, even after a purge.
  let orderTokens = 0
  let migrated = false

  const recordIntent = (input: Parameters<StoreBackend["recordIntent"]>[0], owner: string, now: number, leaseMs: number, sendsEndBy: number): RecordIntentResult => {
    const existing = intents.get(input.idempotencyKey)
    if (existing === undefined) {
      // Every field named (not spread): one object shape for every intent, built without a walk over `input`.
      const intent: Intent = {
        idempotencyKey: input.idempotencyKey, operation: input.operation, client_orderid: input.client_orderid, orderid: input.orderid,
        amount: input.amount, currency: input.currency, endpoint: input.endpoint, beforeRequired: input.beforeRequired,
        createdAt: now, owner, leaseUntil: now + leaseMs, attempts: 1, outcome: undefined, finishedAt: undefined, before: undefined, sendsEndBy
      }
      intents.set(input.idempotencyKey, intent)
      const keys = byOrder.get(input.client_orderid)
      if (keys === undefined) byOrder.set(input.client_orderid, input.idempotencyKey)
      else if (typeof keys === "string") byOrder.set(input.client_orderid, new Set([keys, input.idempotencyKey]))
      else keys.add(input.idempotencyKey)
      return { _tag: "Recorded", intent }
    }
    const fields = conflictingFields(existing, input)
    if (fields.length > 0) return { _tag: "Conflict", intent: existing, fields }
    if (existing.outcome !== undefined) return { _tag: "Finished", intent: existing }
    if (!leaseExpired(existing, now)) return { _tag: "InFlight", intent: existing }
    const taken: Intent = { ...existing, owner, leaseUntil: now + leaseMs, attempts: existing.attempts + 1 }
    intents.set(input.idempotencyKey, taken)
    return { _tag: "TakenOver", intent: taken }
  }

  const recordOutcome = (key: string, outcome: IntentOutcome, now: number, attempt: number | undefined): RecordOutcomeResult | undefined => {
    const existing = intents.get(key)
    if (existing === undefined) return undefined
    if (outcomeRefused(existing, outcome, attempt)) return { _tag: existing.outcome !== undefined ? "AlreadyFinished" : "Stale", intent: existing }
    const finished: Intent = {
      idempotencyKey: existing.idempotencyKey, operation: existing.operation, client_orderid: existing.client_orderid, orderid: existing.orderid,
      amount: existing.amount, currency: existing.currency, endpoint: existing.endpoint, beforeRequired: existing.beforeRequired,
      createdAt: existing.createdAt, owner: existing.owner, leaseUntil: existing.leaseUntil, attempts: existing.attempts, outcome, finishedAt: now, before: existing.before,
      sendsEndBy: existing.sendsEndBy
    }
    intents.set(key, finished)
    return { _tag: "Recorded", intent: finished }
  }

  const claimCallback = (hash: string, owner: string, now: number, leaseMs: number): CallbackClaim => {
    const row = callbacks.get(hash)
    if (row === undefined) {
      callbacks.set(hash, { owner, leaseUntil: now + leaseMs, attempts: 1, completedAt: undefined })
      return { _tag: "Claimed", attempt: 1, leaseUntil: now + leaseMs }
    }
    if (row.completedAt !== undefined) return { _tag: "Done", completedAt: row.completedAt }
    if (row.leaseUntil > now) return { _tag: "RunningElsewhere", owner: row.owner, leaseUntil: row.leaseUntil }
    row.owner = owner
    row.leaseUntil = now + leaseMs
    row.attempts += 1
    return { _tag: "Claimed", attempt: row.attempts, leaseUntil: row.leaseUntil }
  }

  return {
    adapter: "memory",
    recordIntent: async (input, owner, now, leaseMs, sendsEndBy) => recordIntent(input, owner, now, leaseMs, sendsEndBy),
    recordOutcome: async (key, outcome, now, attempt) => recordOutcome(key, outcome, now, attempt),
    writeOutcome: async (key, outcome, now, attempt) => recordOutcome(key, outcome, now, attempt)?._tag,
    findByKey: async (key) => intents.get(key),
    intentsOfOrder: async (clientOrderId, limit) =>
      keysOf(clientOrderId)
        .map((key) => intents.get(key))
        .filter((i): i is Intent => i !== undefined)
        .sort((a, b) => a.createdAt - b.createdAt || (a.idempotencyKey < b.idempotencyKey ? -1 : 1))
        .slice(0, limit),
    reopenIntent: async (key, owner, now, leaseMs, sendsEndBy) => {
      const existing = intents.get(key)
      if (existing === undefined || existing.outcome?._tag !== "Failed") return undefined
      const { outcome: _o, finishedAt: _f, before: _b, ...rest } = existing
      const reopened: Intent = { ...rest, createdAt: now, owner, leaseUntil: now + leaseMs, attempts: existing.attempts + 1, sendsEndBy }
      intents.set(key, reopened)
      return reopened
    },
    recordBefore: async (key, owner, attempt, before) => {
      const existing = intents.get(key)
      if (existing === undefined || existing.outcome !== undefined || existing.owner !== owner || existing.attempts !== attempt) return false
      intents.set(key, { ...existing, before })
      return true
    },
    extendIntentLease: async (key, owner, now, leaseMs, attempt, sendsEndBy) => {
      const existing = intents.get(key)
      if (existing === undefined || existing.outcome !== undefined || existing.owner !== owner) return false
      if (attempt !== undefined && existing.attempts !== attempt) return false
      intents.set(key, {
        ...existing,
        leaseUntil: Math.max(existing.leaseUntil, now + leaseMs),
        sendsEndBy: sendsEndBy === undefined ? existing.sendsEndBy : Math.max(existing.sendsEndBy ?? 0, sendsEndBy)
      })
      return true
    },
    releaseIntent: async (key, attempt, now) => {
      const existing = intents.get(key)
      if (existing === undefined || existing.outcome !== undefined || existing.attempts !== attempt) return false
      intents.set(key, { ...existing, leaseUntil: Math.min(existing.leaseUntil, now), sendsEndBy: Math.min(existing.sendsEndBy ?? now, now) })
      return true
    },
    takeOrderLease: async (orderid, holderKey, owner, now, leaseMs): Promise<OrderLeaseResult> => {
      const row = orderLeases.get(orderid)
      if (row !== undefined && row.leaseUntil > now && row.holderKey !== holderKey) return { _tag: "Held", leaseUntil: row.leaseUntil }
      const taken = { holderKey, owner, token: ++orderTokens, leaseUntil: now + leaseMs }
      orderLeases.set(orderid, taken)
      return { _tag: "Taken", token: taken.token, leaseUntil: taken.leaseUntil }
    },
    releaseOrderLease: async (orderid, holderKey, token, _now) => {
      const row = orderLeases.get(orderid)
      if (row === undefined || row.holderKey !== holderKey || row.token !== token) return false
      orderLeases.delete(orderid)
      return true
    },
    unfinished: async (q) => {
      const due = [...intents.values()]
        .filter((i) => i.outcome === undefined && i.createdAt <= q.createdAtOrBefore && leaseExpired(i, q.now))
        .sort((a, b) => a.createdAt - b.createdAt || (a.idempotencyKey < b.idempotencyKey ? -1 : 1))
        .slice(0, q.limit)
      return due.map((i) => {
        const claimed: Intent = { ...i, owner: q.owner, leaseUntil: q.now + q.leaseMs, attempts: i.attempts + 1 }
        intents.set(i.idempotencyKey, claimed)
        return claimed
      })
    },
    claimCallback: async (hash, owner, now, leaseMs) => claimCallback(hash, owner, now, leaseMs),
    completeCallback: async (hash, now) => {
      const row = callbacks.get(hash)
      if (row === undefined) return "not-claimed"
      if (row.completedAt !== undefined) return "already-completed"
      row.completedAt = now
      return "completed"
    },
    releaseCallback: async (hash, owner, now) => {
      const row = callbacks.get(hash)
      if (row === undefined || row.completedAt !== undefined || row.owner !== owner || row.leaseUntil <= now) return false
      row.leaseUntil = now
      return true
    },
    rememberNonce: async (consumerKey, nonce, expiresAt, nowSeconds) => {
      // Length-prefixed, so ("ab", "c") and ("a", "bc") stay apart.
      const key = `${consumerKey.length}:${consumerKey}${nonce}`
      const expiry = nonces.get(key)
      if (expiry !== undefined && expiry >= nowSeconds) return false
      nonces.set(key, expiresAt)
      return true
    },
    purge: async (before, nowSeconds) => {
      const report: { -readonly [K in keyof PurgeReport]: number } = { intents: 0, callbacks: 0, nonces: 0 }
      for (const [key, i] of intents) {
        if (i.finishedAt === undefined || i.finishedAt >= before) continue
        intents.delete(key)
        const keys = byOrder.get(i.client_orderid)
        if (keys === key) byOrder.delete(i.client_orderid)
        else if (typeof keys === "object") {
          keys.delete(key)
          if (keys.size === 0) byOrder.delete(i.client_orderid)
        }
        report.intents++
      }
      for (const [key, c] of callbacks) {
        if (c.completedAt === undefined || c.completedAt >= before) continue
        callbacks.delete(key)
        report.callbacks++
      }
      for (const [orderid, lease] of orderLeases) if (lease.leaseUntil < before) orderLeases.delete(orderid)
      for (const [key, expiry] of nonces) {
        if (expiry >= nowSeconds) continue
        nonces.delete(key)
        report.nonces++
      }
      return report
    },
    migrate: async () => {
      const applied = !migrated
      migrated = true
      return migrations.map((m) => ({ version: m.version, name: m.name, applied }))
    },
    close: async () => undefined,
    snapshot: () => ({
      intents: [...intents.values()],
      callbacks: [...callbacks].map(([hash, row]) => ({ hash, ...row })),
      nonces: [...nonces]
    })
  }
}

/** A memory store layer (a fresh, empty store per layer build). */
export function memoryStoreLayer(options: StoreOptions = {}): Layer.Layer<PayStore> {
  return Layer.effect(
    PayStore,
    Effect.sync(() => makePayStore(memoryBackend(), options)).pipe(Effect.tap((store) => Effect.orDie(store.migrate)))
  )
}

/** Opens a memory store for the Promise world (`createPayClient({ store })`). */
export function openMemoryStore(options: StoreOptions = {}): Promise<PayStoreHandle> {
  return openStore(async () => memoryBackend(), "memory", options)
}
