/**
 * A money call's two writes on SQL (its intent's first `INSERT`, its outcome's `UPDATE`), as cheap
 * as the database allows: prepared once per connection (`SqlDriver.prepared`), returning only what
 * the caller reads (parsing, planning and decoding a whole row twice per payment cost more than the
 * writes themselves on PGlite), and, for calls that wait for a statement of their kind, many in one
 * statement (`batch.ts`) from one JSON array parameter. Each statement is still the one conditional
 * write per row the backend's rules rest on (`ON CONFLICT DO NOTHING`, `WHERE finished_at IS NULL`).
 *
 * The statement names carry a version: a changed statement gets a new name.
 *
 * @packageDocumentation
 */
import { batched } from "./batch"
import type { SqlDriver } from "./driver"
import type { Intent, IntentInput, IntentOutcome } from "../types"

/** A statement and the name it is prepared under. */
interface Statement {
  readonly name: string
  readonly sql: string
}

const INSERT_INTENT: Statement = {
  name: "paykit_insert_intent_v2",
  sql: `INSERT INTO paykit_intents (idempotency_key, operation, client_orderid, orderid, amount, currency, endpoint, created_at, owner, lease_until, attempts, before_required, sends_end_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $12)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING attempts`
}

/** The outcome columns set, on an intent not finished yet (the first outcome wins). */
// The rule of `outcomeRefused` (rules.ts) as SQL: a success unless a success stands; a failure on an
// unfinished intent, held as the writer's token ($8) when one is given.
export const OUTCOME_SET = `UPDATE paykit_intents
         SET outcome_kind = $2, outcome_status = $3, outcome_error = $4, outcome_orderid = $5, outcome_data = $6::jsonb, finished_at = $7
         WHERE idempotency_key = $1 AND outcome_kind IS DISTINCT FROM 'Returned'
           AND ($2 = 'Returned' OR (finished_at IS NULL AND ($8::integer IS NULL OR attempts = $8::integer)))`

const WRITE_OUTCOME: Statement = { name: "paykit_write_outcome_v2", sql: `${OUTCOME_SET} RETURNING 1` }

// Many calls' rows go in key order, so two batches that share keys lock them in the same order (a
// deadlock the database breaks anyway is an SQLSTATE: batch.ts writes that batch again one by one).
const INSERT_INTENTS: Statement = {
  name: "paykit_insert_intents_v2",
  sql: `INSERT INTO paykit_intents (idempotency_key, operation, client_orderid, orderid, amount, currency, endpoint, created_at, owner, lease_until, attempts, before_required, sends_end_by)
       SELECT k, op, co, oid, amt, cur, ep, c, own, l, 1, br, se
       FROM json_to_recordset($1::json) AS t(k text, op text, co text, oid text, amt text, cur text, ep text, c bigint, own text, l bigint, br boolean, se bigint)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING idempotency_key, attempts`
}

const WRITE_OUTCOMES: Statement = {
  name: "paykit_write_outcomes_v2",
  sql: `UPDATE paykit_intents AS i
       SET outcome_kind = v.kind, outcome_status = v.st, outcome_error = v.err, outcome_orderid = v.oid, outcome_data = v.d, finished_at = v.f
       FROM json_to_recordset($1::json) AS v(k text, kind text, st text, err text, oid text, d jsonb, f bigint, att integer)
       WHERE i.idempotency_key = v.k AND i.outcome_kind IS DISTINCT FROM 'Returned'
         AND (v.kind = 'Returned' OR (i.finished_at IS NULL AND (v.att IS NULL OR i.attempts = v.att)))
       RETURNING i.idempotency_key`
}

// Statements of one kind out at once: PGlite runs one statement at a time anyway; a pool gains from
// a second while the first travels.
const IN_FLIGHT = { pglite: 1, postgres: 2 } as const
const MAX_BATCH = 32

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v))

async function run(db: SqlDriver, statement: Statement, params: ReadonlyArray<unknown>): Promise<ReadonlyArray<ReadonlyArray<unknown>>> {
  if (db.prepared !== undefined) return db.prepared(statement.name, statement.sql, params)
  return (await db.query(statement.sql, params)).map((row) => Object.values(row))
}

/** A new intent as its first `INSERT` writes it. */
export interface NewIntent {
  readonly input: IntentInput
  readonly owner: string
  readonly now: number
  readonly leaseMs: number
  /** The moment its sends end by (the caller's deadline). */
  readonly sendsEndBy: number
}

/** An outcome as a money call's path writes it. */
interface NewOutcome {
  readonly key: string
  readonly outcome: IntentOutcome
  readonly now: number
  /** The writer's fencing token (`undefined`: any). */
  readonly attempt: number | undefined
}

/** The outcome's parameters of {@link OUTCOME_SET}. */
export const outcomeParams = (key: string, outcome: IntentOutcome, now: number, attempt: number | undefined): ReadonlyArray<unknown> => [
  key,
  outcome._tag,
  outcome._tag === "Returned" ? outcome.status : null,
  outcome._tag === "Failed" ? outcome.errorTag : null,
  outcome.orderid ?? null,
  outcome.data === undefined ? null : JSON.stringify(outcome.data),
  now,
  attempt ?? null
]

const byKey = <T>(keyOf: (t: T) => string) => (a: T, b: T) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0)

/** Inserts one new intent; its `attempts` (1), or `undefined` when the key is taken. */
export async function insertOne(db: SqlDriver, w: NewIntent): Promise<number | undefined> {
  const { input } = w
  const rows = await run(db, INSERT_INTENT, [
    input.idempotencyKey, input.operation, input.client_orderid, input.orderid ?? null, input.amount ?? null, input.currency ?? null, input.endpoint,
    w.now, w.owner, w.now + w.leaseMs, input.beforeRequired === true, w.sendsEndBy
  ])
  return rows[0] === undefined ? undefined : num(rows[0][0])
}

async function insertMany(db: SqlDriver, ws: ReadonlyArray<NewIntent>): Promise<ReadonlyArray<number | undefined>> {
  const rows = [...ws].sort(byKey((w) => w.input.idempotencyKey)).map(({ input, owner, now, leaseMs, sendsEndBy }) => ({
    k: input.idempotencyKey, op: input.operation, co: input.client_orderid, oid: input.orderid, amt: input.amount, cur: input.currency, ep: input.endpoint,
    c: now, own: owner, l: now + leaseMs, br: input.beforeRequired === true, se: sendsEndBy
  }))
  const inserted = new Map((await run(db, INSERT_INTENTS, [JSON.stringify(rows)])).map((r) => [String(r[0]), num(r[1])]))
  return ws.map((w) => inserted.get(w.input.idempotencyKey))
}

async function writeMany(db: SqlDriver, ws: ReadonlyArray<NewOutcome>): Promise<ReadonlyArray<boolean>> {
  // An absent field is SQL NULL, as the one-row statement's null parameters.
  const rows = [...ws].sort(byKey((w) => w.key)).map(({ key, outcome, now, attempt }) => ({
    k: key, kind: outcome._tag, st: outcome._tag === "Returned" ? outcome.status : undefined, err: outcome._tag === "Failed" ? outcome.errorTag : undefined,
    oid: outcome.orderid, d: outcome.data, f: now, att: attempt
  }))
  const written = new Set((await run(db, WRITE_OUTCOMES, [JSON.stringify(rows)])).map((r) => String(r[0])))
  return ws.map((w) => written.has(w.key))
}

/** The intent an `INSERT` just stored, from what was inserted (nothing is read back). */
export function insertedIntent(input: IntentInput, owner: string, now: number, leaseMs: number, attempts: number, sendsEndBy: number): Intent {
  return {
    idempotencyKey: input.idempotencyKey,
    operation: input.operation,
    client_orderid: input.client_orderid,
    orderid: input.orderid ?? undefined,
    amount: input.amount ?? undefined,
    currency: input.currency ?? undefined,
    endpoint: input.endpoint,
    createdAt: now,
    owner,
    leaseUntil: now + leaseMs,
    attempts,
    outcome: undefined,
    finishedAt: undefined,
    beforeRequired: input.beforeRequired === true ? true : undefined,
    before: undefined,
    sendsEndBy
  }
}

/** A backend's money-call writes: each resolves once the statement that carried it has committed. */
export interface MoneyWrites {
  /** A new intent's first `INSERT`: its `attempts`, or `undefined` when the key is taken. */
  readonly insert: (w: NewIntent) => Promise<number | undefined>
  /** An outcome on an unfinished intent: `false` when the key has none unfinished. */
  readonly writeOutcome: (key: string, outcome: IntentOutcome, now: number, attempt: number | undefined) => Promise<boolean>
}

/** The money-call writes over a driver (one batcher per kind, per backend). */
export function moneyWrites(db: SqlDriver): MoneyWrites {
  const inFlight = IN_FLIGHT[db.adapter]
  const insert = batched<NewIntent, number | undefined>({
    inFlight, maxBatch: MAX_BATCH, keyOf: (w) => w.input.idempotencyKey, one: (w) => insertOne(db, w), many: (ws) => insertMany(db, ws)
  })
  const write = batched<NewOutcome, boolean>({
    inFlight,
    maxBatch: MAX_BATCH,
    keyOf: (w) => w.key,
    one: async ({ key, outcome, now, attempt }) => (await run(db, WRITE_OUTCOME, outcomeParams(key, outcome, now, attempt))).length > 0,
    many: (ws) => writeMany(db, ws)
  })
  return { insert, writeOutcome: (key, outcome, now, attempt) => write({ key, outcome, now, attempt }) }
}
