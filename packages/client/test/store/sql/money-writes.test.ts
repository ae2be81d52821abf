/**
 * A money call's two writes on SQL (src/store/sql/money-writes.ts) on PGlite. Prepared statements: a write never joins a transaction the caller has open on a shared
 * PGlite database (its rollback would undo an intent recorded before a send), and a statement the
 * database dropped or already holds is sent again, never lost and never run twice. Batches:
 * concurrent writes go many to a statement and each is answered as if it had gone alone; a row the
 * database refuses fails only its own write. The same on a PostgreSQL server (a process of its own):
 * money-writes-postgres.heavy.test.ts.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgliteDriver } from "../../../src/store/pglite"
import type { SqlDriver } from "../../../src/store/sql/driver"
import { makePayStore, type PayStoreService } from "../../../src/store/service"
import { sqlBackend } from "../../../src/store/sql/backend"
import { concurrentCalls, intent, lease, oneRefused, roundTrip, run } from "./money-writes-support"

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
    // The write's statement is handed to the database while the transaction is open (the test
    // waits for that hand-over, not for a fixed time), between the transaction's statements.
    let issued!: () => void
    const handedOver = new Promise<void>((resolve) => (issued = resolve))
    const driver = pgliteDriver(db, false)
    const signalling: SqlDriver = { ...driver, prepared: (name, sql, params) => (issued(), driver.prepared!(name, sql, params)) }
    const own = makePayStore(sqlBackend(signalling))
    let recorded: Promise<unknown> | undefined
    await db.transaction(async (tx) => {
      await tx.query("SELECT 1")
      recorded = run(own.recordIntent(intent("tx-1"), lease))
      await handedOver
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
