/**
 * A money call's two writes on SQL (src/store/sql/money-writes.ts) on a real PostgreSQL server (started
 * by scripts/postgres/server.ts): a statement the server dropped is sent unnamed, every write lands
 * once; concurrent calls' writes go many to a statement, each answered as if alone, and a refused
 * row fails alone. The same on PGlite: money-writes.test.ts.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type PostgresServer } from "../../../../../scripts/postgres/server"
import { endPool } from "../../../src/store/sql/end-pool"
import { postgresDriver } from "../../../src/store/postgres"
import { makePayStore } from "../../../src/store/service"
import { sqlBackend } from "../../../src/store/sql/backend"
import { concurrentCalls, oneRefused, roundTrip, run } from "./money-writes-support"

describe("prepared writes on PostgreSQL", () => {
  let server: PostgresServer
  let pool: pg.Pool
  beforeAll(async () => {
    server = await startPostgres()
    pool = new pg.Pool({ connectionString: server.url, max: 1 })
  }, 120_000)
  afterAll(async () => {
    if (pool !== undefined) await endPool(pool)
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
      await endPool(wide)
    }
  }, 60_000)
})
