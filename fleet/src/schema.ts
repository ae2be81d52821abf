/**
 * The merchant's own tables in the fleet's database, beside PayKit's store (`paykit_*`):
 *
 * - `fleet_jobs`: the payments to make, a work queue the workers claim with `FOR UPDATE SKIP LOCKED`
 *   under a lease (a killed worker's jobs go back to the queue when its lease runs out). A job ends
 *   `done`; `conflict` (its call answered `ReconcileConflict`: the order moved beside it, a person
 *   looks), `unknown` (its call's outcome stayed unknown through `unknowns` runs, or answered unknown
 *   without asking the gateway: left for a person), `forgotten` (with retention on, the gateway forgot
 *   the order before the job's follow-up); or `failed` (anything else: the audit fails the run).
 *   `final_key` names the idempotency key a conflict or an unknown ended on.
 * - `fleet_fulfilments`: the effect of `onCallback`, one row per transaction under a UNIQUE key: the
 *   order and the transaction's index in it (from the callback's `processor-rrn`, the gateway's
 *   per-transaction field, decision 11), so two captures of one order are two transactions.
 * - `fleet_runs`: every `onCallback` run (which process, when, its claim's lease as the store granted
 *   it, whether its insert was new or found the transaction fulfilled, and whether the handler then
 *   answered 200, i.e. the store marked the callback done), so the audit can tell a re-run after a
 *   crash from a duplicate, and a re-run under another run's live lease from both.
 */
import type pg from "pg"
import type { PlannedPayment } from "./plan"

export const FLEET_SCHEMA = `
CREATE TABLE IF NOT EXISTS fleet_jobs (
  id             integer PRIMARY KEY,
  client_orderid text NOT NULL UNIQUE,
  flow           text NOT NULL,
  amount         text NOT NULL,
  follow_amount  text,
  card           text NOT NULL,
  state          text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed', 'conflict', 'unknown', 'forgotten')),
  owner          text,
  lease_until    bigint NOT NULL DEFAULT 0,
  runs           integer NOT NULL DEFAULT 0,
  unknowns       integer NOT NULL DEFAULT 0,
  final_key      text,
  result         text,
  error          text,
  finished_at    bigint
);
CREATE INDEX IF NOT EXISTS fleet_jobs_pending ON fleet_jobs (id) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS fleet_fulfilments (
  orderid        text NOT NULL,
  tx_index       integer NOT NULL,
  tx_type        text NOT NULL,
  client_orderid text NOT NULL,
  status         text NOT NULL,
  amount         text NOT NULL,
  worker         text NOT NULL,
  at             bigint NOT NULL,
  PRIMARY KEY (orderid, tx_index)
);
CREATE TABLE IF NOT EXISTS fleet_runs (
  id             bigserial PRIMARY KEY,
  orderid        text NOT NULL,
  tx_type        text NOT NULL,
  tx_index       integer NOT NULL,
  pid            integer NOT NULL,
  claimed_at     bigint,
  lease_until    bigint,
  started_at     bigint NOT NULL,
  finished_at    bigint,
  completed_at   bigint,
  effect         text CHECK (effect IN ('fulfilled', 'repeat'))
);
`

/** `lease_until` of a job the run has not released yet (no worker can claim it). */
export const HELD = 9_000_000_000_000_000

/** Releases the held jobs with an id below `limit` to the workers. */
export async function releaseJobs(pool: pg.Pool, limit: number): Promise<void> {
  await pool.query("UPDATE fleet_jobs SET lease_until = 0 WHERE id < $1 AND lease_until = $2", [limit, HELD])
}

/** Creates the tables and queues the plan, held (in one transaction). */
export async function seedJobs(pool: pg.Pool, plan: ReadonlyArray<PlannedPayment>): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    await client.query(FLEET_SCHEMA)
    for (let i = 0; i < plan.length; i += 500) {
      const chunk = plan.slice(i, i + 500)
      const params: unknown[] = []
      const rows = chunk.map((p, j) => {
        params.push(p.index, p.clientOrderId, p.flow, p.amount, p.followAmount ?? null, p.card, HELD)
        const b = j * 7
        return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7})`
      })
      await client.query(`INSERT INTO fleet_jobs (id, client_orderid, flow, amount, follow_amount, card, lease_until) VALUES ${rows.join(", ")}`, params)
    }
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}
