/**
 * Ending a `pg` pool whole (src/store/sql/end-pool.ts) on a real PostgreSQL server: `endPool` resolves
 * only once every connection's socket has closed, so a server stopped right after it finds no
 * connection left to answer with an error the pool would emit after it was ended.
 */
import pg from "pg"
import { describe, expect, it } from "vitest"
import { endPool } from "../../../src/store/sql/end-pool"
import { serverForFile } from "../../support/postgres-server"

const requireServer = serverForFile()

/** A pool holding `n` connections, and their sockets. */
async function poolOf(url: string, n: number) {
  const pool = new pg.Pool({ connectionString: url, max: n })
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()))
  const sockets = clients.map((c) => (c as unknown as { connection: { stream: { destroyed: boolean } } }).connection.stream)
  for (const c of clients) c.release()
  return { pool, sockets }
}

describe("endPool", () => {
  it("resolves once every connection the pool held has closed its socket", async () => {
    const { url } = await requireServer()
    const { pool, sockets } = await poolOf(url, 3)
    const errors: Array<unknown> = []
    pool.on("error", (e) => errors.push(e))
    await endPool(pool)
    expect(sockets.map((s) => s.destroyed)).toEqual([true, true, true])
    expect(pool.totalCount).toBe(0)
    expect(errors).toEqual([])
  })

  it("resolves at once for a pool that holds no connection", async () => {
    const { url } = await requireServer()
    const pool = new pg.Pool({ connectionString: url, max: 2 })
    await endPool(pool)
    expect(pool.ended).toBe(true)
  })
})
