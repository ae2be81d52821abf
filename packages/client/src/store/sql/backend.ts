/**
 * The SQL backend shared by the PGlite and PostgreSQL adapters. Every decision that must hold across
 * a fleet is one conditional statement that the database serialises on the row: `INSERT … ON
 * CONFLICT DO NOTHING` to create, `UPDATE … WHERE lease_until <= now` to take over an expired lease,
 * `UPDATE … WHERE finished_at IS NULL` to finish once, and `FOR UPDATE SKIP LOCKED` to hand out
 * recovery work. There is no read-then-write: where a step reads, the write after it re-checks the
 * condition, and a lost race only sends the loop round once more.
 *
 * @packageDocumentation
 */
import type { StoreBackend } from "../backend"
import type { SqlDriver, SqlRow } from "./driver"
import { applyMigrations } from "../migrations"
import { conflictingFields } from "../rules"
import { insertedIntent, insertOne, moneyWrites, OUTCOME_SET, outcomeParams, type NewIntent } from "./money-writes"
import type { BeforeSnapshot, CallbackClaim, CallbackCompletion, Intent, IntentInput, IntentOutcome, JsonValue, OrderLeaseResult, RecordIntentResult } from "../types"

const COLUMNS = `idempotency_key, operation, client_orderid, orderid, amount, currency, endpoint, created_at, owner,
  lease_until, attempts, outcome_kind, outcome_status, outcome_error, outcome_orderid, outcome_data, finished_at,
  before_snapshot, before_required, sends_end_by`

// A bounded loop: each round either decides or observed a concurrent change; more than a handful of
// changes to one key between two statements means something is wrong, not merely busy.
const MAX_ROUNDS = 8

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v))
const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v))

function toIntent(row: SqlRow): Intent {
  const kind = row["outcome_kind"]
  const data = row["outcome_data"] === null || row["outcome_data"] === undefined
    ? undefined
    : (typeof row["outcome_data"] === "string" ? JSON.parse(row["outcome_data"]) : row["outcome_data"]) as JsonValue
  const orderid = opt(row["outcome_orderid"])
  const outcome: IntentOutcome | undefined = kind === "Returned"
    ? { _tag: "Returned", status: String(row["outcome_status"]), orderid, data }
    : kind === "Failed"
    ? { _tag: "Failed", errorTag: String(row["outcome_error"]), orderid, data }
    : undefined
  return {
    idempotencyKey: String(row["idempotency_key"]),
    operation: String(row["operation"]),
    client_orderid: String(row["client_orderid"]),
    orderid: opt(row["orderid"]),
    amount: opt(row["amount"]),
    currency: opt(row["currency"]),
    endpoint: String(row["endpoint"]),
    createdAt: num(row["created_at"]),
    owner: String(row["owner"]),
    leaseUntil: num(row["lease_until"]),
    attempts: num(row["attempts"]),
    outcome,
    finishedAt: row["finished_at"] === null || row["finished_at"] === undefined ? undefined : num(row["finished_at"]),
    beforeRequired: row["before_required"] === true ? true : undefined,
    before: row["before_snapshot"] === null || row["before_snapshot"] === undefined
      ? undefined
      : (typeof row["before_snapshot"] === "string" ? JSON.parse(row["before_snapshot"]) : row["before_snapshot"]) as BeforeSnapshot,
    sendsEndBy: row["sends_end_by"] === null || row["sends_end_by"] === undefined ? undefined : num(row["sends_end_by"])
  }
}

async function findIntent(db: SqlDriver, key: string): Promise<Intent | undefined> {
  const rows = await db.query(`SELECT ${COLUMNS} FROM paykit_intents WHERE idempotency_key = $1`, [key])
  return rows[0] === undefined ? undefined : toIntent(rows[0])
}

async function recordIntent(
  db: SqlDriver,
  insert: (w: NewIntent) => Promise<number | undefined>,
  input: IntentInput,
  owner: string,
  now: number,
  leaseMs: number,
  sendsEndBy: number
): Promise<RecordIntentResult> {
  const key = input.idempotencyKey
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const w = { input, owner, now, leaseMs, sendsEndBy }
    const attempts = round === 0 ? await insert(w) : await insertOne(db, w)
    if (attempts !== undefined) return { _tag: "Recorded", intent: insertedIntent(input, owner, now, leaseMs, attempts, sendsEndBy) }
    const existing = await findIntent(db, key)
    if (existing === undefined) continue // purged in between: insert again
    const fields = conflictingFields(existing, input)
    if (fields.length > 0) return { _tag: "Conflict", intent: existing, fields }
    if (existing.outcome !== undefined) return { _tag: "Finished", intent: existing }
    if (existing.leaseUntil > now) return { _tag: "InFlight", intent: existing }
    const taken = await db.query(
      `UPDATE paykit_intents SET owner = $2, lease_until = $3, attempts = attempts + 1
       WHERE idempotency_key = $1 AND finished_at IS NULL AND lease_until <= $4
       RETURNING ${COLUMNS}`,
      [key, owner, now + leaseMs, now]
    )
    if (taken[0] !== undefined) return { _tag: "TakenOver", intent: toIntent(taken[0]) }
    // Someone else took it over or finished it between the two statements: look again.
  }
  throw new Error("recordIntent: the key kept changing under concurrent writers")
}

async function claimCallback(db: SqlDriver, hash: string, owner: string, now: number, leaseMs: number): Promise<CallbackClaim> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const inserted = await db.query(
      `INSERT INTO paykit_callbacks (query_sha256, owner, lease_until, attempts, created_at) VALUES ($1, $2, $3, 1, $4)
       ON CONFLICT (query_sha256) DO NOTHING RETURNING attempts, lease_until`,
      [hash, owner, now + leaseMs, now]
    )
    const taken = inserted[0] ?? (await db.query(
      `UPDATE paykit_callbacks SET owner = $2, lease_until = $3, attempts = attempts + 1
       WHERE query_sha256 = $1 AND completed_at IS NULL AND lease_until <= $4
       RETURNING attempts, lease_until`,
      [hash, owner, now + leaseMs, now]
    ))[0]
    if (taken !== undefined) return { _tag: "Claimed", attempt: num(taken["attempts"]), leaseUntil: num(taken["lease_until"]) }
    const rows = await db.query("SELECT owner, lease_until, completed_at FROM paykit_callbacks WHERE query_sha256 = $1", [hash])
    const row = rows[0]
    if (row === undefined) continue // purged in between
    if (row["completed_at"] !== null && row["completed_at"] !== undefined) return { _tag: "Done", completedAt: num(row["completed_at"]) }
    const leaseUntil = num(row["lease_until"])
    if (leaseUntil > now) return { _tag: "RunningElsewhere", owner: String(row["owner"]), leaseUntil }
    // Released between our UPDATE and SELECT: try to take it again.
  }
  throw new Error("claimCallback: the claim kept changing under concurrent writers")
}

async function completeCallback(db: SqlDriver, hash: string, now: number): Promise<CallbackCompletion> {
  const done = await db.query(
    "UPDATE paykit_callbacks SET completed_at = $2 WHERE query_sha256 = $1 AND completed_at IS NULL RETURNING 1 AS done",
    [hash, now]
  )
  if (done.length > 0) return "completed"
  const rows = await db.query("SELECT 1 AS found FROM paykit_callbacks WHERE query_sha256 = $1", [hash])
  return rows.length > 0 ? "already-completed" : "not-claimed"
}

async function count(db: SqlDriver, sql: string, params: ReadonlyArray<unknown>): Promise<number> {
  const rows = await db.query(`WITH d AS (${sql} RETURNING 1) SELECT count(*) AS n FROM d`, params)
  return num(rows[0]?.["n"] ?? 0)
}

/** The SQL backend over a driver (the caller owns the driver; `close` closes it). */
export function sqlBackend(db: SqlDriver): StoreBackend {
  const writes = moneyWrites(db)
  return {
    adapter: db.adapter,
    recordIntent: (input, owner, now, leaseMs, sendsEndBy) => recordIntent(db, writes.insert, input, owner, now, leaseMs, sendsEndBy),
    recordOutcome: async (key, outcome, now, attempt) => {
      const rows = await db.query(`${OUTCOME_SET} RETURNING ${COLUMNS}`, outcomeParams(key, outcome, now, attempt))
      if (rows[0] !== undefined) return { _tag: "Recorded", intent: toIntent(rows[0]) }
      const existing = await findIntent(db, key)
      return existing === undefined ? undefined : { _tag: existing.outcome !== undefined ? "AlreadyFinished" : "Stale", intent: existing }
    },
    writeOutcome: async (key, outcome, now, attempt) => {
      if (await writes.writeOutcome(key, outcome, now, attempt)) return "Recorded"
      const found = await db.query("SELECT finished_at FROM paykit_intents WHERE idempotency_key = $1", [key])
      if (found[0] === undefined) return undefined
      return found[0]["finished_at"] === null || found[0]["finished_at"] === undefined ? "Stale" : "AlreadyFinished"
    },
    findByKey: (key) => findIntent(db, key),
    // paykit_intents_client_orderid (migration 1) serves this look-up.
    intentsOfOrder: async (clientOrderId, limit) =>
      (await db.query(
        `SELECT ${COLUMNS} FROM paykit_intents WHERE client_orderid = $1 ORDER BY created_at, idempotency_key LIMIT $2`,
        [clientOrderId, limit]
      )).map(toIntent),
    reopenIntent: async (key, owner, now, leaseMs, sendsEndBy) => {
      const rows = await db.query(
        `UPDATE paykit_intents
         SET outcome_kind = NULL, outcome_status = NULL, outcome_error = NULL, outcome_orderid = NULL, outcome_data = NULL,
             finished_at = NULL, before_snapshot = NULL, created_at = $3, owner = $2, lease_until = $4, attempts = attempts + 1,
             sends_end_by = $5
         WHERE idempotency_key = $1 AND outcome_kind = 'Failed'
         RETURNING ${COLUMNS}`,
        [key, owner, now, now + leaseMs, sendsEndBy]
      )
      return rows[0] === undefined ? undefined : toIntent(rows[0])
    },
    recordBefore: async (key, owner, attempt, before) => {
      const rows = await db.query(
        `UPDATE paykit_intents SET before_snapshot = $4::jsonb
         WHERE idempotency_key = $1 AND owner = $2 AND attempts = $3 AND finished_at IS NULL
         RETURNING 1 AS ok`,
        [key, owner, attempt, JSON.stringify(before)]
      )
      return rows.length > 0
    },
    extendIntentLease: async (key, owner, now, leaseMs, attempt, sendsEndBy) => {
      const rows = await db.query(
        `UPDATE paykit_intents SET lease_until = GREATEST(lease_until, $3), sends_end_by = GREATEST(sends_end_by, $5::bigint)
         WHERE idempotency_key = $1 AND owner = $2 AND finished_at IS NULL AND ($4::integer IS NULL OR attempts = $4::integer)
         RETURNING 1 AS ok`,
        [key, owner, now + leaseMs, attempt ?? null, sendsEndBy ?? null]
      )
      return rows.length > 0
    },
    releaseIntent: async (key, attempt, now) => {
      const rows = await db.query(
        `UPDATE paykit_intents SET lease_until = LEAST(lease_until, $3), sends_end_by = LEAST(COALESCE(sends_end_by, $3), $3)
         WHERE idempotency_key = $1 AND attempts = $2 AND finished_at IS NULL RETURNING 1 AS ok`,
        [key, attempt, now]
      )
      return rows.length > 0
    },
    takeOrderLease: async (orderid, holderKey, owner, now, leaseMs): Promise<OrderLeaseResult> => {
      // One statement: a new row, or the row taken over when its lease ran out or its holder is
      // this call; the token counts every taking of the order.
      const rows = await db.query(
        `INSERT INTO paykit_order_leases AS l (orderid, holder_key, owner, token, lease_until) VALUES ($1, $2, $3, 1, $4)
         ON CONFLICT (orderid) DO UPDATE SET holder_key = EXCLUDED.holder_key, owner = EXCLUDED.owner, token = l.token + 1, lease_until = EXCLUDED.lease_until
         WHERE l.lease_until <= $5 OR l.holder_key = EXCLUDED.holder_key
         RETURNING token, lease_until`,
        [orderid, holderKey, owner, now + leaseMs, now]
      )
      if (rows[0] !== undefined) return { _tag: "Taken", token: num(rows[0]["token"]), leaseUntil: num(rows[0]["lease_until"]) }
      const held = await db.query("SELECT lease_until FROM paykit_order_leases WHERE orderid = $1", [orderid])
      // Released between the two statements: the caller asks again.
      return { _tag: "Held", leaseUntil: held[0] === undefined ? now : num(held[0]["lease_until"]) }
    },
    releaseOrderLease: async (orderid, holderKey, token, now) => {
      const rows = await db.query(
        `UPDATE paykit_order_leases SET lease_until = LEAST(lease_until, $4)
         WHERE orderid = $1 AND holder_key = $2 AND token = $3 RETURNING 1 AS ok`,
        [orderid, holderKey, token, now]
      )
      return rows.length > 0
    },
    unfinished: async (q) => {
      // One statement: the subquery locks the rows it picks and skips rows another claimer has
      // locked, and the UPDATE moves their lease, so the claim outlives the statement's row locks.
      const rows = await db.query(
        `UPDATE paykit_intents SET owner = $1, lease_until = $2, attempts = attempts + 1
         WHERE idempotency_key IN (
           SELECT idempotency_key FROM paykit_intents
           WHERE finished_at IS NULL AND created_at <= $3 AND lease_until <= $4
           ORDER BY created_at, idempotency_key
           LIMIT $5
           FOR UPDATE SKIP LOCKED
         )
         RETURNING ${COLUMNS}`,
        [q.owner, q.now + q.leaseMs, q.createdAtOrBefore, q.now, q.limit]
      )
      return rows.map(toIntent).sort((a, b) => a.createdAt - b.createdAt || (a.idempotencyKey < b.idempotencyKey ? -1 : 1))
    },
    claimCallback: (hash, owner, now, leaseMs) => claimCallback(db, hash, owner, now, leaseMs),
    completeCallback: (hash, now) => completeCallback(db, hash, now),
    releaseCallback: async (hash, owner, now) => {
      const rows = await db.query(
        `UPDATE paykit_callbacks SET lease_until = $3
         WHERE query_sha256 = $1 AND owner = $2 AND completed_at IS NULL AND lease_until > $3
         RETURNING 1 AS ok`,
        [hash, owner, now]
      )
      return rows.length > 0
    },
    rememberNonce: async (consumerKey, nonce, expiresAt, nowSeconds) => {
      const rows = await db.query(
        `INSERT INTO paykit_nonces (consumer_key, nonce, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (consumer_key, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
         WHERE paykit_nonces.expires_at < $4
         RETURNING 1 AS ok`,
        [consumerKey, nonce, expiresAt, nowSeconds]
      )
      return rows.length > 0
    },
    purge: async (before, nowSeconds) => {
      // Order leases that ran out before `before` hold nothing any more (not counted: no record of anything).
      await db.query("DELETE FROM paykit_order_leases WHERE lease_until < $1", [before])
      return {
        intents: await count(db, "DELETE FROM paykit_intents WHERE finished_at < $1", [before]),
        callbacks: await count(db, "DELETE FROM paykit_callbacks WHERE completed_at < $1", [before]),
        nonces: await count(db, "DELETE FROM paykit_nonces WHERE expires_at < $1", [nowSeconds])
      }
    },
    migrate: () => applyMigrations(db),
    close: () => db.close()
  }
}
