/**
 * Ends a `pg` pool and waits until each of its connections has closed. `Pool.end()` resolves once
 * the pool has asked its idle clients to end, before their sockets close; a server stopped in that
 * gap (a test's server, a database restarting at shutdown) answers a connection that has not yet
 * read its Terminate with an error, which the pool emits as an `error` event after the caller was
 * told the pool had ended. Waiting for every client's `remove` closes that gap.
 *
 * @packageDocumentation
 */
import type { Pool } from "pg"

// A connection whose attempt fails while the pool ends leaves the pool without a `remove`: the
// wait for the others is bounded, so such a close still returns (as `Pool.end()` alone would).
const CLOSE_WAIT_MS = 5_000

/** `pool.end()`, resolved only once every connection the pool held has closed. */
export async function endPool(pool: Pool): Promise<void> {
  const open = pool.totalCount
  let removed = 0
  let done: () => void = () => undefined
  const closed = new Promise<void>((resolve) => (done = resolve))
  const onRemove = () => {
    removed++
    if (removed >= open) done()
  }
  pool.on("remove", onRemove)
  const guard = setTimeout(() => done(), CLOSE_WAIT_MS)
  guard.unref?.()
  try {
    await pool.end()
    if (open > 0) await closed
  } finally {
    clearTimeout(guard)
    pool.removeListener("remove", onRemove)
  }
}
