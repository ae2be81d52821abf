/**
 * The prepared statements of a money call's two writes (SqlDriver.prepared) on PGlite and on a real
 * PostgreSQL server: a write never joins a transaction the caller has open on a shared PGlite
 * database (its rollback would undo an intent recorded before a send), and a statement the
 * database dropped or already holds is sent again, never lost and never run twice.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type PostgresServer } from "../../../../scripts/postgres/server"
import { pgliteDriver } from "../../src/store/pglite"
import { postgresDriver } from "../../src/store/postgres"
import { makePayStore, type PayStoreService } from "../../src/store/service"
import { sqlBackend } from "../../src/store/sql"
import type { IntentInput } from "../../src/store/types"

const intent = (key: string): IntentInput => ({ idempotencyKey: key, operation: "SALE", client_orderid: `order-${key}`, amount: "10.00", currency: "USD", endpoint: "1001" })
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const lease = { leaseMs: 30_000 }

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
})
