/**
 * The floor of a durable store: the rows a store-backed sale writes, written by hand, one row per
 * statement, straight through the driver, into a table like the store's own (`LIKE paykit_intents
 * INCLUDING ALL`: the same columns, checks and indexes) in the same database. A sale's rows are an
 * `INSERT … ON CONFLICT DO NOTHING` of its intent and `UPDATE`s of that row up to the number of rows
 * the store wrote per sale; the store's count is read from the database's own statistics
 * (`pg_stat_user_tables`: rows inserted plus rows updated in every table but the floor's), so the
 * floor follows the store's writes as they change.
 *
 * Each statement is as cheap as the driver makes a single row: on PostgreSQL a named statement
 * through `pg` (parsed once per connection); on PGlite a named statement bound and executed in one
 * protocol message (`execProtocol`: PGlite's `query` parses, plans and makes six calls into the
 * WASM backend per statement, about twice the cost, so it would be no floor at all).
 *
 * The floor asks nothing of the gateway: it is what the writes alone allow, the most a store-backed
 * sale could reach if the store cost nothing but its rows.
 *
 * @packageDocumentation
 */
import { protocol, type PGlite } from "@electric-sql/pglite"
import type pg from "pg"

/** One way to run SQL on the store's database: a statement with parameters, and its name when prepared. */
export interface FloorDb {
  readonly query: (name: string, sql: string, params: ReadonlyArray<unknown>) => Promise<unknown>
  readonly exec: (sql: string) => Promise<unknown>
  /** Rows inserted plus rows updated so far in the database's tables but the floor's (flushed statistics). */
  readonly rowsWritten: () => Promise<number>
}

const TABLE = "bench_floor_intents"

const INSERT = {
  name: "bench_floor_insert",
  sql: `INSERT INTO ${TABLE} (idempotency_key, operation, client_orderid, orderid, amount, currency, endpoint, created_at, owner, lease_until, attempts, before_required)
        VALUES ($1, 'SALE', $2, NULL, $3, 'USD', '1001', $4, 'bench-floor', $5, 1, false)
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING attempts`
}
// Each further write of a sale's row: the first sets its outcome as the store does (the first
// outcome wins: `finished_at IS NULL`), any after it touch the lease as a store's later write would.
const OUTCOME = {
  name: "bench_floor_outcome",
  sql: `UPDATE ${TABLE} SET outcome_kind = 'Returned', outcome_status = $2, outcome_orderid = $3, outcome_data = $4::jsonb, finished_at = $5
        WHERE idempotency_key = $1 AND finished_at IS NULL RETURNING 1`
}
const TOUCH = {
  name: "bench_floor_touch",
  sql: `UPDATE ${TABLE} SET lease_until = $2 WHERE idempotency_key = $1 RETURNING 1`
}

const STATS = `SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0)::bigint AS n FROM pg_stat_user_tables WHERE relname <> '${TABLE}'`

/** Reads the statistics until two reads a moment apart agree (each server process sends its counts when idle or at exit). */
async function settled(read: () => Promise<number>): Promise<number> {
  let last = await read()
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const now = await read()
    if (now === last) return now
    last = now
  }
  return last
}

/** The floor over a `pg` pool (named statements: parsed once per connection, as a careful hand-written caller would). */
export function postgresFloorDb(pool: pg.Pool): FloorDb {
  return {
    query: (name, sql, params) => pool.query({ name, text: sql, values: [...params] }),
    exec: (sql) => pool.query(sql),
    rowsWritten: () => settled(async () => Number((await pool.query(STATS)).rows[0].n))
  }
}

/**
 * Rows written per sale by `sales` run through a store on a server, counted once that store's
 * connections are closed (a server process sends its counts at exit; an idle one may hold them
 * for seconds): `run` opens the store, makes the sales and closes it.
 */
export async function postgresWritesPerSale(pool: pg.Pool, sales: number, run: () => Promise<void>): Promise<number> {
  const read = async () => Number((await pool.query(STATS)).rows[0].n)
  const before = await settled(read)
  await run()
  return ((await settled(read)) - before) / sales
}

/** The floor over an open PGlite database: named statements, Bind + Execute + Sync in one message (Parse the first time). */
export function pgliteFloorDb(db: PGlite): FloorDb {
  const parsed = new Set<string>()
  return {
    query: (name, sql, params) =>
      db.runExclusive(async () => {
        const values = params.map((v) => (v === null || v === undefined ? null : String(v)))
        const bind = [protocol.serialize.bind({ statement: name, values }), protocol.serialize.execute({}), protocol.serialize.sync()]
        const message = parsed.has(name) ? Buffer.concat(bind) : Buffer.concat([protocol.serialize.parse({ name, text: sql }), ...bind])
        const result = await db.execProtocol(message)
        parsed.add(name)
        return result
      }),
    exec: (sql) => db.exec(sql),
    rowsWritten: async () => {
      // One backend: its own counts are flushed on request.
      await db.query("SELECT pg_stat_force_next_flush()")
      return Number((await db.query<{ n: string | number }>(STATS)).rows[0]!.n)
    }
  }
}

/** Creates the floor's table beside the store's (which must exist: open the store first). */
export async function prepareFloor(db: FloorDb): Promise<void> {
  await db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (LIKE paykit_intents INCLUDING ALL)`)
}

let round = 0

/**
 * `total` sales' rows, `inFlight` sales at a time, `writesPerSale` single-row statements each (at
 * least 1: the intent's insert): sales' worth of rows per second.
 */
export async function floorRound(db: FloorDb, total: number, inFlight: number, writesPerSale: number, outcome: { status: string; orderid: string; data: string }): Promise<number> {
  round++
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < total) {
      const i = next++
      const key = `floor-${round}-${i}`
      const now = Date.now()
      await db.query(INSERT.name, INSERT.sql, [key, key, "10.00", now, now + 60_000])
      for (let w = 1; w < writesPerSale; w++) {
        if (w === 1) await db.query(OUTCOME.name, OUTCOME.sql, [key, outcome.status, outcome.orderid, outcome.data, Date.now()])
        else await db.query(TOUCH.name, TOUCH.sql, [key, Date.now() + 60_000])
      }
    }
  }))
  return total / ((performance.now() - started) / 1000)
}
