/**
 * One PostgreSQL 15 server per test file (scripts/postgres/server.ts: Debian's package, a temp
 * directory, stopped after the file): started when the file loads, so the suite's own hooks find it
 * starting; if it cannot start, every test that asks for it fails with the reason, never a skip.
 */
import { afterAll } from "vitest"
import { startPostgres, type PostgresServer } from "../../../../scripts/postgres/server"

/** Starts this file's server; the returned function resolves to it (or fails with why it could not start). */
export function serverForFile(): () => Promise<PostgresServer> {
  let server: PostgresServer | undefined
  let startFailure: unknown
  const ready = startPostgres().then(
    (s) => {
      server = s
      return s
    },
    (e: unknown) => {
      startFailure = e
      throw e
    }
  )
  ready.catch(() => undefined)
  afterAll(async () => {
    await server?.stop()
  }, 60_000)
  return async () => {
    await ready.catch(() => undefined)
    if (server === undefined) throw startFailure instanceof Error ? startFailure : new Error(String(startFailure))
    return server
  }
}
