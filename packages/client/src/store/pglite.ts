/**
 * `@paykit/client/store/pglite`: the store on PGlite (PostgreSQL compiled to WASM), the embedded
 * default for one process. Durable in a directory; in memory when none is given. The same schema,
 * migrations and statements as the PostgreSQL adapter. PGlite is one connection in one process, so
 * it suits a single instance; a fleet needs `@paykit/client/store/postgres`.
 *
 * Needs the optional peer dependency `@electric-sql/pglite`.
 *
 * @packageDocumentation
 */
import { PGlite } from "@electric-sql/pglite"
import { Config, type ConfigError, Effect, Layer, Option } from "effect"
import { toStoreError } from "./backend"
import type { SqlDriver, SqlSession } from "./driver"
import { openStore, PayStore, storeLayer, type PayStoreHandle, type StoreOptions } from "./service"
import { sqlBackend } from "./sql"
import type { StoreError } from "./types"

/** Options of the PGlite store. */
export interface PgliteStoreOptions extends StoreOptions {
  /** Directory of the database (created when missing); omit for an in-memory database. */
  readonly dataDir?: string | undefined
  /** An open PGlite database to use instead (not closed by the store). */
  readonly db?: PGlite | undefined
}

type Queryable = Pick<PGlite, "query" | "exec">

function session(db: Queryable): SqlSession {
  return {
    query: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params === undefined ? undefined : [...params])).rows,
    exec: async (sql) => void (await db.exec(sql))
  }
}

/** A driver over a PGlite database (`owned`: closed with the driver). */
export function pgliteDriver(db: PGlite, owned: boolean): SqlDriver {
  return {
    adapter: "pglite",
    ...session(db),
    transaction: (work) => db.transaction((tx) => work(session(tx))),
    close: async () => {
      if (owned && !db.closed) await db.close()
    }
  }
}

async function openDriver(options: PgliteStoreOptions): Promise<SqlDriver> {
  if (options.db !== undefined) return pgliteDriver(options.db, false)
  const db = options.dataDir === undefined ? await PGlite.create() : await PGlite.create(options.dataDir)
  return pgliteDriver(db, true)
}

/** A scoped layer: opens (and migrates) the PGlite store, closes it with the layer. */
export function pgliteStoreLayer(options: PgliteStoreOptions = {}): Layer.Layer<PayStore, StoreError> {
  return storeLayer(
    Effect.tryPromise({ try: () => openDriver(options).then(sqlBackend), catch: (e) => toStoreError("pglite", "open", e) }),
    options
  )
}

/** The PGlite store from the environment: `PAYKIT_PGLITE_DIR` (optional; in memory without it). */
export function pgliteStoreLayerConfig(options: StoreOptions = {}): Layer.Layer<PayStore, StoreError | ConfigError.ConfigError> {
  return Layer.unwrapEffect(
    Effect.map(Config.option(Config.string("PAYKIT_PGLITE_DIR")), (dir) =>
      pgliteStoreLayer({ ...options, dataDir: Option.getOrUndefined(dir) }))
  )
}

/** Opens the PGlite store for the Promise world (`createPayClient({ store })`); call `close()` at shutdown. */
export function openPgliteStore(options: PgliteStoreOptions = {}): Promise<PayStoreHandle> {
  return openStore(() => openDriver(options).then(sqlBackend), "pglite", options)
}

export { PayStore, type PayStoreHandle, type StoreOptions }
