/**
 * The checks money-writes.test.ts (PGlite) and money-writes-postgres.heavy.test.ts (a PostgreSQL
 * server) run on a money call's two writes (src/store/sql/money-writes.ts): concurrent calls' writes in
 * batches, a refused row, a round trip.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import type { SqlDriver } from "../../../src/store/sql/driver"
import { makePayStore, type PayStoreService } from "../../../src/store/service"
import { sqlBackend } from "../../../src/store/sql/backend"
import type { IntentInput } from "../../../src/store/types"
import { storeWritesOf } from "../../../src/store/writes"

export const intent = (key: string): IntentInput => ({ idempotencyKey: key, operation: "SALE", client_orderid: `order-${key}`, amount: "10.00", currency: "USD", endpoint: "1001" })
export const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
export const lease = { leaseMs: 30_000 }

/** A driver that logs the names of the prepared statements it runs. */
export function logged(driver: SqlDriver): { driver: SqlDriver; names: Array<string> } {
  const names: Array<string> = []
  const prepared = driver.prepared!
  return { driver: { ...driver, prepared: (name, sql, params) => (names.push(name), prepared(name, sql, params)) }, names }
}

/**
 * Sixty concurrent calls' intents (three keys twice, one key again for another request), then their
 * outcomes (one key twice, one never recorded): every answer is the one a write alone gets, and the
 * writes went in fewer statements than calls.
 */
export async function concurrentCalls(driver: SqlDriver, prefix: string) {
  const { driver: d, names } = logged(driver)
  const store = makePayStore(sqlBackend(d))
  const keys = Array.from({ length: 56 }, (_, i) => `${prefix}-${i}`)
  const inputs = [...keys.map((k) => intent(k)), intent(keys[1]!), intent(keys[2]!), intent(keys[3]!), { ...intent(keys[4]!), amount: "99.00" }]
  const answers = await Promise.all(inputs.map((i) => run(store.recordIntent(i, lease))))
  // Two writes of one key at once: one records it (either: they race, as two statements would), the
  // other finds it held, or recorded for another request.
  for (const [i, k] of keys.entries()) {
    const tags = answers.flatMap((a, n) => (inputs[n]!.idempotencyKey === k ? [a._tag] : []))
    expect(tags.sort()).toEqual(i >= 1 && i <= 3 ? ["InFlight", "Recorded"] : i === 4 ? ["Conflict", "Recorded"] : ["Recorded"])
  }
  expect(answers.filter((a) => a._tag === "Recorded").every((a) => a.intent.attempts === 1)).toBe(true)
  const inserts = names.filter((n) => n.startsWith("paykit_insert_intent"))
  expect(inserts).toContain("paykit_insert_intents_v2")
  expect(inserts.length).toBeLessThan(inputs.length / 2)

  const writes = storeWritesOf(store)!
  const outcomes = await Promise.allSettled([
    ...keys.map((k, i) => writes.recordOutcome(k, { _tag: "Returned", status: "approved", orderid: String(i), data: { i, key: k } })),
    writes.recordOutcome(keys[0]!, { _tag: "Failed", errorTag: "Late" }),
    writes.recordOutcome(`${prefix}-never`, { _tag: "Returned", status: "approved" })
  ])
  expect(outcomes.slice(0, 57).every((o) => o.status === "fulfilled")).toBe(true)
  expect(outcomes[57]).toMatchObject({ status: "rejected", reason: { _tag: "StoreInputError", field: "idempotencyKey" } })
  for (const [i, k] of keys.entries()) {
    expect((await run(store.findByKey(k)))?.outcome).toEqual({ _tag: "Returned", status: "approved", orderid: String(i), data: { i, key: k } })
  }
  const updates = names.filter((n) => n.startsWith("paykit_write_outcome"))
  expect(updates).toContain("paykit_write_outcomes_v2")
  expect(updates.length).toBeLessThan(keys.length / 2)
}

/** Ten concurrent intents, one of them refused by a rule of the schema: only that one fails. */
export async function oneRefused(store: PayStoreService, exec: (sql: string) => Promise<unknown>, prefix: string) {
  await exec("ALTER TABLE paykit_intents ADD CONSTRAINT no_eur CHECK (currency IS DISTINCT FROM 'EUR')")
  try {
    const inputs = Array.from({ length: 10 }, (_, i) => (i === 6 ? { ...intent(`${prefix}-${i}`), currency: "EUR" } : intent(`${prefix}-${i}`)))
    const answers = await Promise.all(inputs.map((i) => run(Effect.either(store.recordIntent(i, lease)))))
    expect(answers.map((a) => (a._tag === "Right" ? a.right._tag : a.left._tag))).toEqual([...Array(6).fill("Recorded"), "StoreError", ...Array(3).fill("Recorded")])
    expect(answers[6]).toMatchObject({ left: { code: "23514", method: "recordIntent" } })
    expect(await run(store.findByKey(`${prefix}-6`))).toBeUndefined()
  } finally {
    await exec("ALTER TABLE paykit_intents DROP CONSTRAINT no_eur")
  }
}

/** Records an intent and its outcome, and reads both back. */
export async function roundTrip(store: PayStoreService, key: string) {
  expect((await run(store.recordIntent(intent(key), lease)))._tag).toBe("Recorded")
  expect((await run(store.recordIntent(intent(key), lease)))._tag).toBe("InFlight")
  expect((await run(store.recordOutcome(key, { _tag: "Returned", status: "approved", orderid: "9", data: { n: 1 } })))._tag).toBe("Recorded")
  expect(await run(store.findByKey(key))).toMatchObject({ attempts: 1, outcome: { _tag: "Returned", status: "approved", orderid: "9", data: { n: 1 } } })
}
