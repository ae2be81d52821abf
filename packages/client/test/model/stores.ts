/**
 * The shared store of a model run, one per adapter: memory (one store object per sequence, shared
 * by every instance as one process shares it; it survives an instance's crash, which models a
 * restart), PGlite (one database per process, emptied between sequences; each instance opens its own
 * handle on it under its own `instanceId`) and PostgreSQL 15 (a server started for the run, or a
 * given URL; each instance its own handle under its own `instanceId`, all on one pool).
 *
 * @packageDocumentation
 */
import { openMemoryStore, type PayStoreHandle, type PayStoreService } from "../../src/index"

/** The store kinds the model runs on. */
export type StoreName = "memory" | "pglite" | "postgres"

/** A store for model sequences. */
export interface ModelStore {
  readonly name: StoreName
  /** Starts a sequence on an empty store. */
  begin(): Promise<void>
  /** The store as the instance `owner` opens it. */
  open(owner: string): Promise<PayStoreService>
  /** Ends the sequence (closes what it opened; the database stays for the next one). */
  end(): Promise<void>
  /** Closes everything. */
  close(): Promise<void>
}

const TABLES = "paykit_intents, paykit_callbacks, paykit_nonces, paykit_order_leases"

/** Memory: a fresh store object per sequence, the same object for every instance of it. */
export function memoryModelStore(): ModelStore {
  let store: PayStoreHandle | undefined
  return {
    name: "memory",
    begin: async () => {
      store = await openMemoryStore({ instanceId: "model-process" })
    },
    open: async () => store!,
    end: async () => {
      await store?.close()
      store = undefined
    },
    close: async () => undefined
  }
}

/** PGlite: one in-memory database for the process, emptied between sequences. */
export async function pgliteModelStore(): Promise<ModelStore> {
  const { PGlite } = await import("@electric-sql/pglite")
  const { openPgliteStore } = await import("../../src/store/pglite")
  const db = new PGlite()
  // Migrated once; every later handle skips migrations.
  const first = await openPgliteStore({ db, instanceId: "model-migrate" })
  await first.close()
  const handles: Array<PayStoreHandle> = []
  return {
    name: "pglite",
    begin: async () => {
      await db.exec(TABLES.split(", ").map((t) => `DELETE FROM ${t};`).join(" "))
    },
    open: async (owner) => {
      const handle = await openPgliteStore({ db, instanceId: owner, migrate: false })
      handles.push(handle)
      return handle
    },
    end: async () => {
      for (const h of handles.splice(0)) await h.close()
    },
    close: async () => {
      await db.close()
    }
  }
}

/** PostgreSQL: the server at `url`, one pool for the process, tables emptied between sequences. */
export async function postgresModelStore(url: string): Promise<ModelStore> {
  const pg = (await import("pg")).default
  const { openPostgresStore } = await import("../../src/store/postgres")
  const { endPool } = await import("../../src/store/sql/end-pool")
  // No idle timeout: pg's idle timer runs on the model's virtual clock, where minutes pass between
  // steps, and would close every connection each sequence (a new backend, a SCRAM login and the
  // store's prepared statements again, on every one).
  const pool = new pg.Pool({ connectionString: url, max: 8, idleTimeoutMillis: 0 })
  const first = await openPostgresStore({ pool, instanceId: "model-migrate" })
  await first.close()
  const handles: Array<PayStoreHandle> = []
  return {
    name: "postgres",
    begin: async () => {
      await pool.query(`TRUNCATE ${TABLES}`)
    },
    open: async (owner) => {
      const handle = await openPostgresStore({ pool, instanceId: owner, migrate: false })
      handles.push(handle)
      return handle
    },
    end: async () => {
      for (const h of handles.splice(0)) await h.close()
    },
    close: async () => {
      await endPool(pool)
    }
  }
}
