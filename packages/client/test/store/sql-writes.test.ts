/**
 * A money call's two writes on SQL (src/store/sql-writes.ts) on PGlite and on a real PostgreSQL
 * server. Prepared statements: a write never joins a transaction the caller has open on a shared
 * PGlite database (its rollback would undo an intent recorded before a send), and a statement the
 * database dropped or already holds is sent again, never lost and never run twice. Batches:
 * concurrent writes go many to a statement and each is answered as if it had gone alone; a row the
 * database refuses fails only its own write.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type PostgresServer } from "../../../../scripts/postgres/server"
import { pgliteDriver } from "../../src/store/pglite"
import { postgresDriver } from "../../src/store/postgres"
import type { SqlDriver } from "../../src/store/driver"
import { makePayStore, type PayStoreService } from "../../src/store/service"
import { sqlBackend } from "../../src/store/sql"
import type { IntentInput } from "../../src/store/types"
import { storeWritesOf } from "../../src/store/writes"

const intent = (key: string): IntentInput => ({ idempotencyKey: key, operation: "SALE", client_orderid: `order-${key}`, amount: "10.00", currency: "USD", endpoint: "1001" })
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const lease = { leaseMs: 30_000 }

/** A driver that logs the names of the prepared statements it runs. */
function logged(driver: SqlDriver): { driver: SqlDriver; names: Array<string> } {
  const names: Array<string> = []
  const prepared = driver.prepared!
  return { driver: { ...driver, prepared: (name, sql, params) => (names.push(name), prepared(name, sql, params)) }, names }
}

/**
 * Sixty concurrent calls' intents (three keys twice, one key again for another request), then their
 * outcomes (one key twice, one never recorded): every answer is the one a write alone gets, and the
 * writes went in fewer statements than calls.
 */
async function concurrentCalls(driver: SqlDriver, prefix: string) {
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
  expect(inserts).toContain("paykit_insert_intents_v1")
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
  expect(updates).toContain("paykit_write_outcomes_v1")
  expect(updates.length).toBeLessThan(keys.length / 2)
}

/** Ten concurrent intents, one of them refused by a rule of the schema: only that one fails. */
async function oneRefused(store: PayStoreService, exec: (sql: string) => Promise<unknown>, prefix: string) {
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
async function roundTrip(store: PayStoreService, key: string) {
  expect((await run(store.recordIntent(intent(key), lease)))._tag).toBe("Recorded")
  expect((await run(store.recordIntent(intent(key), lease)))._tag).toBe("InFlight")
  expect((await run(store.recordOutcome(key, { _tag: "Returned", status: "approved", orderid: "9", data: { n: 1 } })))._tag).toBe("Recorded")
  expect(await run(store.findByKey(key))).toMatchObject({ attempts: 1, outcome: { _tag: "Returned", status: "approved", orderid: "9", data: { n: 1 } } })
}

describe("prepared writes on a shared PGlite database", () => {
  let db: PGlite
  let store: PayStoreService
  beforeAll(async () => {
    db = await PGlite.create()
    store = makePayStore(sqlBackend(pgliteDriver(db, false)))
    await run(store.migrate)
  }, 60_000)
  afterAll(() => db.close())

  it("an intent recorded while the caller's own transaction is open stays when that transaction rolls back", async () => {
    let recorded: Promise<unknown> | undefined
    await db.transaction(async (tx) => {
      await tx.query("SELECT 1")
      recorded = run(store.recordIntent(intent("tx-1"), lease))
      // Let the write try to run between the transaction's statements.
      await new Promise((r) => setTimeout(r, 20))
      await tx.query("SELECT 2")
      await tx.rollback()
    })
    expect(await recorded).toMatchObject({ _tag: "Recorded" })
    expect(await run(store.findByKey("tx-1"))).toMatchObject({ idempotencyKey: "tx-1", attempts: 1 })
  })

  it("statements dropped by DEALLOCATE ALL are prepared again; a second store on the database shares their names", async () => {
    await roundTrip(store, "dealloc-1")
    await db.exec("DEALLOCATE ALL")
    await roundTrip(store, "dealloc-2")
    const second = makePayStore(sqlBackend(pgliteDriver(db, false)))
    await roundTrip(second, "second-1")
    await roundTrip(store, "dealloc-3")
    const rows = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM paykit_intents WHERE outcome_kind = 'Returned'")
    expect(rows.rows[0]?.n).toBe(4)
  })

  it("concurrent calls' writes go many to a statement, each answered as if alone", async () => {
    await concurrentCalls(pgliteDriver(db, false), "pgl-many")
  })

  it("a row the database refuses fails only its own call's write", async () => {
    await oneRefused(store, (sql) => db.exec(sql), "pgl-refused")
  })

  it("a failed write (a broken rule of the schema) fails as StoreError with its code, and the next write works", async () => {
    await roundTrip(store, "before-error")
    const bad = await run(Effect.flip(store.recordOutcome("before-error-missing", { _tag: "Returned", status: "approved" })))
    expect(bad).toMatchObject({ _tag: "StoreInputError", field: "idempotencyKey" })
    await db.exec("ALTER TABLE paykit_intents ADD CONSTRAINT no_eur CHECK (currency IS DISTINCT FROM 'EUR')")
    try {
      const e = await run(Effect.flip(store.recordIntent({ ...intent("eur-1"), currency: "EUR" }, lease)))
      expect(e).toMatchObject({ _tag: "StoreError", method: "recordIntent", code: "23514" })
    } finally {
      await db.exec("ALTER TABLE paykit_intents DROP CONSTRAINT no_eur")
    }
    await roundTrip(store, "after-error")
  })
})

describe("prepared writes on PostgreSQL", () => {
  let server: PostgresServer
  let pool: pg.Pool
  beforeAll(async () => {
    server = await startPostgres()
    pool = new pg.Pool({ connectionString: server.url, max: 1 })
  }, 120_000)
  afterAll(async () => {
    await pool?.end()
    await server?.stop()
  }, 60_000)

  it("a statement the server dropped (as a pooler in transaction mode does) is sent unnamed: every write lands once", async () => {
    const store = makePayStore(sqlBackend(postgresDriver(pool, false)))
    await run(store.migrate)
    await roundTrip(store, "pg-1")
    // One connection in the pool: this drops the statements `pg` believes that connection holds.
    await pool.query("DEALLOCATE ALL")
    await roundTrip(store, "pg-2")
    await roundTrip(store, "pg-3")
    const rows = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM paykit_intents WHERE outcome_kind = 'Returned'")
    expect(rows.rows[0]?.n).toBe(3)
  }, 60_000)

  it("concurrent calls' writes go many to a statement, each answered as if alone; a refused row fails alone", async () => {
    const wide = new pg.Pool({ connectionString: server.url, max: 4 })
    try {
      await concurrentCalls(postgresDriver(wide, false), "pg-many")
      await oneRefused(makePayStore(sqlBackend(postgresDriver(wide, false))), (sql) => wide.query(sql), "pg-refused")
    } finally {
      await wide.end()
    }
  }, 60_000)
})
