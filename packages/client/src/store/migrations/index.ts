/**
 * The schema's migrations, in order, and the runner every SQL adapter uses. The runner holds a
 * transaction-scoped advisory lock, so instances starting together apply each migration once; it
 * records each applied version with the SHA-256 of its SQL in `paykit_migrations`, skips what is
 * recorded, and refuses to start when a recorded migration's SQL has changed since.
 *
 * @packageDocumentation
 */
import type { SqlDriver } from "../sql/driver"
import { sha256Hex } from "../hash"
import type { MigrationRecord } from "../types"
import { sql as initial } from "./0001_initial"
import { sql as beforeSnapshot } from "./0002_before_snapshot"
import { sql as fencing } from "./0003_fencing"

/** One migration. */
export interface Migration {
  /** Its version (applied in ascending order). */
  readonly version: number
  /** Its name. */
  readonly name: string
  /** Its SQL (several statements). */
  readonly sql: string
}

/** Every migration of the schema, in order. */
export const migrations: ReadonlyArray<Migration> = [
  { version: 1, name: "initial", sql: initial },
  { version: 2, name: "before_snapshot", sql: beforeSnapshot },
  { version: 3, name: "fencing", sql: fencing }
]

// Any constant works; this one spells "paykit" in its bytes so an operator can recognise it in pg_locks.
const ADVISORY_LOCK = 0x7061796b6974

/** Applies the pending migrations in one transaction. */
export async function applyMigrations(driver: SqlDriver): Promise<ReadonlyArray<MigrationRecord>> {
  const checksums = await Promise.all(migrations.map((m) => sha256Hex(m.sql)))
  return driver.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK})`)
    await tx.exec(`CREATE TABLE IF NOT EXISTS paykit_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      checksum   text NOT NULL,
      applied_at bigint NOT NULL
    )`)
    const rows = await tx.query("SELECT version, checksum FROM paykit_migrations")
    const applied = new Map(rows.map((r) => [Number(r["version"]), String(r["checksum"])]))
    const out: Array<MigrationRecord> = []
    for (const [i, m] of migrations.entries()) {
      const checksum = checksums[i]!
      const recorded = applied.get(m.version)
      if (recorded !== undefined) {
        if (recorded !== checksum) throw new Error(`migration ${m.version} (${m.name}) differs from the one applied to this database`)
        out.push({ version: m.version, name: m.name, applied: false })
        continue
      }
      await tx.exec(m.sql)
      await tx.query(
        "INSERT INTO paykit_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
        [m.version, m.name, checksum]
      )
      out.push({ version: m.version, name: m.name, applied: true })
    }
    // Versions newer than this code knows are left alone: migrations only add, so an older
    // instance keeps working beside a newer one during a rolling deploy.
    return out
  })
}
