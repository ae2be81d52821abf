/**
 * `@paykit/client/store/postgres`: the store on a PostgreSQL server through a `pg` pool, for a fleet
 * of merchant instances. Every instance connects to the same database; the database decides every
 * race (unique keys, conditional updates, `FOR UPDATE SKIP LOCKED`). The URL is a secret (it holds
 * the password) and is read through `Config.redacted("PAYKIT_DATABASE_URL")`.
 *
 * Needs the optional peer dependency `pg`.
 *
 * @packageDocumentation
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import pg from "pg"
import type { Pool, PoolClient, PoolConfig } from "pg"
import { toStoreError } from "./backend"
import type { SqlDriver, SqlSession } from "./sql/driver"
import { endPool } from "./sql/end-pool"
import { openStore, PayStore, storeLayer, type PayStoreHandle, type StoreOptions } from "./service"
import { sqlBackend } from "./sql/backend"
import type { StoreError } from "./types"

/** Options of the PostgreSQL store: a connection string (a pool is made and closed) or your own pool. */
export interface PostgresStoreOptions extends StoreOptions {
  /** `postgres://user:password@host:port/database`; pass a `Redacted` to keep it out of logs. */
  readonly connectionString?: string | Redacted.Redacted<string> | undefined
  /** Largest number of connections of the pool the store makes (default 10). */
  readonly poolMax?: number | undefined
  /** How long to wait for a connection before failing with `StoreError` (default 10 000 ms). */
  readonly connectionTimeoutMs?: number | undefined
  /**
   * How long one statement may take before the pool gives up on it, client side (`query_timeout`)
   * and server side (`statement_timeout`); default 10 000 ms. A money call also bounds every store
   * step by its own deadline.
   */
  readonly statementTimeoutMs?: number | undefined
  /** An existing pool to use instead (not ended by the store). */
  readonly pool?: Pool | undefined
}

type Client = Pick<PoolClient, "query">

function session(client: Client): SqlSession {
  return {
    query: async (sql, params) => (await client.query(sql, params === undefined ? undefined : [...params])).rows as ReadonlyArray<Record<string, unknown>>,
    exec: async (sql) => void (await client.query(sql))
  }
}

/**
 * Named statements through `pg` (it parses each once per connection and then sends only Bind and
 * Execute). A server that does not keep them (a pooler in transaction mode hands each transaction
 * another server connection) answers "does not exist" or "already exists" at Parse or Bind, before
 * anything ran: that call is sent again unnamed, and so is every later one of this driver.
 */
function preparedOn(pool: Pool): NonNullable<SqlDriver["prepared"]> {
  let named = true
  const unnamed = async (sql: string, values: Array<unknown>) => (await pool.query({ text: sql, values, rowMode: "array" })).rows as ReadonlyArray<ReadonlyArray<unknown>>
  return async (name, sql, params) => {
    const values = [...params]
    if (!named) return unnamed(sql, values)
    try {
      return (await pool.query({ name, text: sql, values, rowMode: "array" })).rows as ReadonlyArray<ReadonlyArray<unknown>>
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code
      if (code !== "26000" && code !== "42P05") throw error
      named = false
      return unnamed(sql, values)
    }
  }
}

/** A driver over a `pg` pool (`owned`: ended with the driver). */
export function postgresDriver(pool: Pool, owned: boolean): SqlDriver {
  return {
    adapter: "postgres",
    ...session(pool),
    prepared: preparedOn(pool),
    transaction: async (work) => {
      const client = await pool.connect()
      let broken: Error | undefined
      try {
        await client.query("BEGIN")
        const result = await work(session(client))
        await client.query("COMMIT")
        return result
      } catch (error) {
        await client.query("ROLLBACK").catch((e: unknown) => {
          broken = e instanceof Error ? e : new Error("rollback failed")
        })
        throw error
      } finally {
        // A connection whose rollback failed is in an unknown state: destroy it, never reuse it.
        client.release(broken)
      }
    },
    close: async () => {
      if (owned) await endPool(pool)
    }
  }
}

function makePool(options: PostgresStoreOptions): { pool: Pool; owned: boolean } {
  if (options.pool !== undefined) return { pool: options.pool, owned: false }
  if (options.connectionString === undefined) throw new Error("a connectionString or a pool is required")
  const config: PoolConfig = {
    connectionString: Redacted.isRedacted(options.connectionString) ? Redacted.value(options.connectionString) : options.connectionString,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    // A partitioned network neither answers nor resets: every statement is bounded here (the
    // client's timer, which frees the caller) and on the server (which frees the row locks).
    query_timeout: options.statementTimeoutMs ?? 10_000,
    statement_timeout: options.statementTimeoutMs ?? 10_000
  }
  const pool = new pg.Pool(config)
  // An idle connection dropped by the server emits `error` on the pool; unhandled, it would end
  // the process. The next query on a fresh connection reports any lasting trouble as StoreError.
  pool.on("error", () => undefined)
  return { pool, owned: true }
}

async function openDriver(options: PostgresStoreOptions): Promise<SqlDriver> {
  const { pool, owned } = makePool(options)
  return postgresDriver(pool, owned)
}

/** A scoped layer: opens the pool, migrates, and ends the pool with the layer. */
export function postgresStoreLayer(options: PostgresStoreOptions): Layer.Layer<PayStore, StoreError> {
  return storeLayer(
    Effect.tryPromise({ try: () => openDriver(options).then(sqlBackend), catch: (e) => toStoreError("postgres", "open", e) }),
    options
  )
}

/** What {@link postgresStoreConfig} reads. */
export interface PostgresStoreConfig {
  /** The connection URL, held as `Redacted`. */
  readonly connectionString: Redacted.Redacted<string>
  /** Connections of the pool. */
  readonly poolMax: number
}

/**
 * The configuration of the PostgreSQL store from the environment: `PAYKIT_DATABASE_URL` (a secret,
 * read as `Redacted`) and `PAYKIT_DATABASE_POOL_MAX` (optional, default 10).
 */
export const postgresStoreConfig: Config.Config<PostgresStoreConfig> = Config.all({
  connectionString: Config.redacted("PAYKIT_DATABASE_URL"),
  poolMax: Config.option(Config.integer("PAYKIT_DATABASE_POOL_MAX"))
}).pipe(
  Config.mapOrFail(({ connectionString, poolMax }) => {
    const max = Option.getOrElse(poolMax, () => 10)
    return max >= 1
      ? Either.right({ connectionString, poolMax: max })
      : Either.left(ConfigError.InvalidData(["PAYKIT_DATABASE_POOL_MAX"], "must be a positive integer"))
  })
)

/** The PostgreSQL store layer from the environment (see {@link postgresStoreConfig}). */
export function postgresStoreLayerConfig(options: StoreOptions = {}): Layer.Layer<PayStore, StoreError | ConfigError.ConfigError> {
  return Layer.unwrapEffect(Effect.map(postgresStoreConfig, (config) => postgresStoreLayer({ ...options, ...config })))
}

/** Opens the PostgreSQL store for the Promise world (`createPayClient({ store })`); call `close()` at shutdown. */
export function openPostgresStore(options: PostgresStoreOptions): Promise<PayStoreHandle> {
  return openStore(() => openDriver(options).then(sqlBackend), "postgres", options)
}

export { PayStore, type PayStoreHandle, type StoreOptions }
/** The schema's migrations in order, for a DBA who applies them by hand (then open stores with `migrate: false`). */
export { migrations, type Migration } from "./migrations"
