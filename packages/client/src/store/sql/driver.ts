/**
 * The little the SQL backend needs from a PostgreSQL connection, so one backend serves PGlite
 * (one embedded connection) and `pg` (a pool) alike.
 *
 * @packageDocumentation
 */

/** A row as a driver returns it (PGlite gives `bigint` columns as numbers, `pg` as strings). */
export type SqlRow = Readonly<Record<string, unknown>>

/** Statements on one connection. */
export interface SqlSession {
  /** One parameterised statement (`$1`, `$2`, ...). */
  readonly query: (sql: string, params?: ReadonlyArray<unknown>) => Promise<ReadonlyArray<SqlRow>>
  /** Several statements without parameters (a migration file). */
  readonly exec: (sql: string) => Promise<void>
}

/** A PostgreSQL connection or pool. */
export interface SqlDriver extends SqlSession {
  /**
   * One parameterised statement prepared once per connection under `name` (the same `name` always
   * with the same `sql`), its rows as arrays in the order of its `RETURNING` list, their values as
   * the driver gives them (text or parsed): what a money call's two writes use, so the database
   * parses and plans each of them once. Runs outside any transaction the caller has open on a
   * shared connection. Absent: the backend uses `query`.
   */
  readonly prepared?: ((name: string, sql: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<ReadonlyArray<unknown>>>) | undefined
  /** `pglite` or `postgres`. */
  readonly adapter: "pglite" | "postgres"
  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it rejects. */
  readonly transaction: <T>(work: (session: SqlSession) => Promise<T>) => Promise<T>
  /** Closes what the driver opened itself. */
  readonly close: () => Promise<void>
}
