/**
 * `@paykit/client/store/pglite`: the store on PGlite (PostgreSQL compiled to WASM), the embedded
 * default for one process. Durable in a directory; in memory when none is given. The same schema,
 * migrations and statements as the PostgreSQL adapter. PGlite is one connection in one process, so
 * it suits a single instance; a fleet needs `@paykit/client/store/postgres`.
 *
 * Durability: a write has committed and its WAL is written to the directory (through the operating
 * system) before its Promise resolves, so a process killed after recording an intent leaves it for
 * `recover()`. PGlite runs PostgreSQL without fsync, so an operating-system crash or power loss may
 * lose the last writes; use the PostgreSQL adapter where that matters.
 *
 * Needs the optional peer dependency `@electric-sql/pglite`.
 *
 * @packageDocumentation
 */
import { PGlite, protocol } from "@electric-sql/pglite"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { toStoreError } from "./backend"
import type { SqlDriver, SqlSession } from "./sql/driver"
import { openStore, PayStore, storeLayer, type PayStoreHandle, type StoreOptions } from "./service"
import { sqlBackend } from "./sql/backend"
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

// The codes after which a prepared statement was not run (an error in Parse or Bind skips the rest
// up to Sync), so it is sent once more: the statement was dropped (DEALLOCATE on a shared database),
// or it exists already though this driver has not seen its Parse succeed.
const NOT_PREPARED = "26000"
const ALREADY_PREPARED = "42P05"

function concat(parts: ReadonlyArray<Uint8Array>): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/**
 * Named statements on PGlite: `query` makes six calls into the WASM backend per statement (Parse,
 * two Describes, Bind, Execute, Sync) and parses and plans it each time; this sends Bind, Execute
 * and Sync as one message (with Parse the first time), about a quarter of the work per write.
 * Durability is `query`'s: the statement commits on its own (Sync ends its implicit transaction)
 * before the Promise resolves, and the filesystem sync PGlite does after a query is done here too.
 */
function preparedOn(db: PGlite): NonNullable<SqlDriver["prepared"]> {
  const parsed = new Set<string>()
  const once = (name: string, sql: string, values: Array<string | null>) =>
    db.runExclusive(async () => {
      // A transaction of the caller's is open on this shared database between its statements: this
      // write must not join it (its rollback would undo an intent recorded before a send).
      if (db.isInTransaction()) return undefined
      const bind = [protocol.serialize.bind({ statement: name, values }), protocol.serialize.execute({}), protocol.serialize.sync()]
      const message = parsed.has(name) ? concat(bind) : concat([protocol.serialize.parse({ name, text: sql }), ...bind])
      const result = await db.execProtocol(message)
      parsed.add(name)
      return result.messages.flatMap((m) => (m.name === "dataRow" ? [(m as unknown as { fields: ReadonlyArray<string | null> }).fields] : []))
    })
  return async (name, sql, params) => {
    const values = params.map((v) => (v === null || v === undefined ? null : String(v)))
    let rows: ReadonlyArray<ReadonlyArray<unknown>> | undefined
    try {
      rows = await once(name, sql, values)
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code
      if (code !== NOT_PREPARED && code !== ALREADY_PREPARED) throw error
      if (code === NOT_PREPARED) parsed.delete(name)
      else parsed.add(name)
      rows = await once(name, sql, values)
    }
    // Queued behind the caller's transaction instead, as any query is.
    return rows ?? (await db.query<Array<unknown>>(sql, [...params], { rowMode: "array" })).rows
  }
}

/** A driver over a PGlite database (`owned`: closed with the driver). */
export function pgliteDriver(db: PGlite, owned: boolean): SqlDriver {
  return {
    adapter: "pglite",
    ...session(db),
    prepared: preparedOn(db),
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
