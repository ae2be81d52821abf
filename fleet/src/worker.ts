/**
 * One merchant instance of the fleet, as its own process: a PayKit client on the shared PostgreSQL
 * store, a callback endpoint whose `onCallback` fulfils each transaction once (unique key in
 * `fleet_fulfilments`), and a loop that claims payments from `fleet_jobs` and runs them. At start it
 * runs `recover()` for whatever a dead instance left unfinished; a restarted instance then replays
 * some of the idempotency keys its dead predecessors used (`FLEET_REPLAYS`), as a merchant's retry
 * queue would after a restart.
 *
 * The run kills it with SIGKILL: at a random moment, or (armed through IPC) at a chosen point —
 * a few ms after a money-moving request was handed to fetch (bytes in flight), or inside `onCallback`
 * before or after its effect. Nothing here cleans up on the way down: that is the point.
 *
 * Every money call it makes is reported to the run (`{ t: "call" }`): its key, how it ended, how
 * many requests it made to the gateway for its order (none: it was answered from the store or this
 * process's memory) and how long it took against its deadline. Requests are counted per
 * `client_orderid` in the client's fetch; the callback handler has a client of its own, so its
 * `status` look-ups are not counted against a job's calls.
 *
 * Environment (never argv, which `ps` shows): FLEET_WORKER, FLEET_DATABASE_URL (the merchant's tables),
 * FLEET_STORE_DATABASE_URL (the store's way to the same database: the stalling proxy), FLEET_SIM_URL,
 * FLEET_CALLBACK_URL, FLEET_CLAIMS (`store`, or `memory` for the broken fleet the tests audit),
 * FLEET_RETENTION (`on` when the simulator forgets orders), FLEET_REPLAYS, FLEET_PREVIOUS_OWNERS,
 * FLEET_MAX_UNKNOWNS.
 */
import { appendFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { createPayClient, memoryCallbackStore, type CallbackClaimStore, type ConfirmedCallback } from "@paykit/client"
import { openPostgresStore } from "@paykit/client/store/postgres"
import { requests, testMerchant } from "@paykit/testkit"
import { Effect, Redacted } from "effect"
import pg from "pg"
import { CARDS, SETTINGS } from "./settings"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`worker: ${name} is not set`)
  return value
}
const name = env("FLEET_WORKER")
const databaseUrl = Redacted.make(env("FLEET_DATABASE_URL"))
// The store's way to the same database (through the run's stalling proxy when stalls are planned).
const storeDatabaseUrl = Redacted.make(process.env["FLEET_STORE_DATABASE_URL"] || env("FLEET_DATABASE_URL"))
const simUrl = env("FLEET_SIM_URL")
const callbackUrl = env("FLEET_CALLBACK_URL")
const claimsMode = process.env["FLEET_CLAIMS"] ?? "store"
const retention = process.env["FLEET_RETENTION"] === "on"
const notFoundMs = process.env["FLEET_NOT_FOUND_MS"] ?? ""
// The gateway's processing window as the run's faults make it (faults.ts `settleFor`).
const settleMs = Number(process.env["FLEET_SETTLE_MS"] || String(SETTINGS.timeoutMs))
const replays = Number(process.env["FLEET_REPLAYS"] ?? "0")
const previousOwners = (process.env["FLEET_PREVIOUS_OWNERS"] ?? "").split(",").filter((o) => o !== "")
const maxUnknowns = Number(process.env["FLEET_MAX_UNKNOWNS"] ?? "6")
const owner = `${name}:${process.pid}`
const send = (message: Record<string, unknown>) => process.send?.(message)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const tagOf = (e: unknown) => (typeof e === "object" && e !== null && typeof (e as { _tag?: unknown })._tag === "string" ? (e as { _tag: string })._tag : "untyped")
const codeOf = (e: unknown) => {
  const code = (e as { errorCode?: unknown } | null)?.errorCode
  return typeof code === "string" ? code : undefined
}

// The run going away (its IPC channel closing) ends the worker as abruptly as a kill would.
process.on("disconnect", () => process.exit(1))

// --- kills at chosen points -------------------------------------------------------------------
let armed: { point: string; delayMs: number } | undefined
process.on("message", (m: { t?: string; point?: string; delayMs?: number }) => {
  if (m.t === "arm" && typeof m.point === "string") armed = { point: m.point, delayMs: m.delayMs ?? 0 }
  if (m.t === "stop") void stop()
})
function reached(point: "send" | "callback"): void {
  if (armed === undefined || armed.point !== point) return
  const { delayMs } = armed
  armed = undefined
  send({ t: "dying", point })
  setTimeout(() => process.kill(process.pid, "SIGKILL"), delayMs)
}

// --- requests to the gateway, counted per client_orderid ----------------------------------------------
interface Counts {
  requests: number
  sends: number
}
/**
 * A fetch that counts each request by the `client_orderid` of its form body (and calls `onSend` for
 * money-moving ones). The body is read once here and sent as read (a `clone()` would tee the stream,
 * which costs more than the request itself).
 */
function countingFetch(counts: Map<string, Counts>, onSend?: () => void) {
  return async (request: Request): Promise<Response> => {
    const body = await request.text()
    const isSend = !request.url.includes("/status/")
    const coid = new URLSearchParams(body).get("client_orderid") ?? ""
    const c = counts.get(coid) ?? { requests: 0, sends: 0 }
    c.requests++
    if (isSend) c.sends++
    counts.set(coid, c)
    const at = Date.now()
    const sent = fetch(request.url, { method: request.method, headers: request.headers, body, signal: request.signal })
    if (isSend) onSend?.()
    if (trace !== undefined) traced(sent, request.url, coid, at)
    return sent
  }
}

// --- the trace (with `keep`): every request to the gateway and what came back ----------------------
const traceDir = process.env["FLEET_TRACE_DIR"] ?? ""
const trace = traceDir === "" ? undefined : join(traceDir, `trace-${name}-${process.pid}.jsonl`)
/** Notes one request and its answer (the reply's status and error code only: never a card field). */
function traced(sent: Promise<Response>, url: string, coid: string, at: number): void {
  const path = new URL(url).pathname.split("/").filter((p) => p !== "")[2] ?? url
  const note = (fields: Record<string, unknown>) => {
    try {
      appendFileSync(trace!, JSON.stringify({ at, ms: Date.now() - at, worker: owner, op: path, client_orderid: coid, ...fields }) + "\n")
    } catch {
      // The trace is evidence, never a reason for a call to fail.
    }
  }
  // Noted as it leaves too: a worker killed before the answer still leaves its request in the trace.
  note({ phase: "sent" })
  sent.then(
    (r) => r.clone().text().then((text) => {
      // The gateway answers JSON; only the reply's kind, status and error code are noted.
      let reply: Record<string, unknown> = {}
      try {
        const parsed: unknown = JSON.parse(text)
        if (typeof parsed === "object" && parsed !== null) reply = parsed as Record<string, unknown>
      } catch {
        reply = { type: "unreadable" }
      }
      note({ phase: "answered", http: r.status, type: reply["type"], status: reply["status"], errorCode: reply["error-code"] })
    }),
    (e: unknown) => note({ phase: "failed", failed: e instanceof Error ? e.name : String(e) })
  ).catch(() => undefined)
}

// --- the clients on the shared store ---------------------------------------------------------------
/**
 * The store, opened as a supervised merchant process would: a database that does not answer at
 * start (a stall on this worker's proxy) is waited out, a few seconds at a time, rather than
 * crashing the process.
 */
async function openStore(): Promise<Awaited<ReturnType<typeof openPostgresStore>>> {
  for (let tries = 1; ; tries++) {
    try {
      return await openPostgresStore({ connectionString: storeDatabaseUrl, instanceId: owner, poolMax: SETTINGS.storePoolMax })
    } catch (error) {
      if (tries >= 20 || tagOf(error) !== "StoreError") throw error
      await sleep(500)
    }
  }
}
const store = await openStore()
const db = new pg.Pool({ connectionString: Redacted.value(databaseUrl), max: SETTINGS.fleetPoolMax })
db.on("error", () => undefined)
const clientOptions = {
  baseUrl: simUrl,
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  privateKeyPem: testMerchant.privateKeyPem,
  endpointId: testMerchant.endpointId,
  store,
  intentLeaseMs: SETTINGS.intentLeaseMs,
  timeoutMs: SETTINGS.timeoutMs,
  retry: { maxRetries: 3, baseDelayMs: 25, maxDelayMs: 400 },
  // `order-not-found` proves "never sent" only while the gateway surely keeps orders (faults.ts
  // `notFoundBound`, docs/fleet.md#the-intent-protocol).
  reconcile: { settleMs, pollIntervalMs: 200, ...(notFoundMs === "" ? {} : { notFoundProvesWithinMs: Number(notFoundMs) }) },
  poll: { fastIntervalMs: 50, fastPhaseMs: 30_000, slowIntervalMs: 500, deadlineMs: 30_000 }
}
const jobCounts = new Map<string, Counts>()
const pay = createPayClient({ ...clientOptions, fetch: countingFetch(jobCounts, () => reached("send")) })
const handlerClient = createPayClient(clientOptions)

type Pay = typeof pay
interface CallReport {
  readonly key: string
  readonly op: string
  readonly replay: boolean
}
/**
 * Runs one money call and reports it: how it ended, the requests it made for its order, and its
 * time against its deadline (`deadlineMs`, or none for a status wait).
 */
async function reported<T>(counts: Map<string, Counts>, coid: string, what: CallReport, deadlineMs: number | undefined, call: () => Promise<T>): Promise<T> {
  const before = { ...(counts.get(coid) ?? { requests: 0, sends: 0 }) }
  const started = Date.now()
  let tag = "ok"
  let code: string | undefined
  try {
    return await call()
  } catch (error) {
    tag = tagOf(error)
    code = codeOf(error)
    throw error
  } finally {
    const ms = Date.now() - started
    const after = counts.get(coid) ?? { requests: 0, sends: 0 }
    send({ t: "call", ...what, tag, code, requests: after.requests - before.requests, sends: after.sends - before.sends, ms, deadlineMs })
  }
}

// --- callbacks: fulfil each transaction once ----------------------------------------------------
// The claims of the store (or, for the broken fleet, of this process's memory), with the lease each
// claim was granted noted by its key, so each onCallback run records the lease it ran under.
const leases = new Map<string, { claimedAt: number; leaseUntil: number }>()
const norm = (query: string) => query.replace(/^\?/, "")
const memoryClaims = memoryCallbackStore()
const claims: CallbackClaimStore = claimsMode === "memory"
  ? {
    claim: async (query, leaseMs) => {
      const now = Date.now()
      const r = await memoryClaims.claim(query, leaseMs)
      if (r === "claimed") leases.set(norm(query), { claimedAt: now, leaseUntil: now + leaseMs })
      return r
    },
    complete: (query) => {
      leases.delete(norm(query))
      return memoryClaims.complete(query)
    },
    release: (query) => {
      leases.delete(norm(query))
      return memoryClaims.release(query)
    }
  }
  : {
    claim: async (query, leaseMs) => {
      const now = Date.now()
      const c = await Effect.runPromise(store.claimCallback(query, { leaseMs }))
      if (c._tag === "Claimed") leases.set(norm(query), { claimedAt: now, leaseUntil: c.leaseUntil })
      return c._tag === "Claimed" ? "claimed" : c._tag === "Done" ? "done" : "running-elsewhere"
    },
    complete: (query) => {
      leases.delete(norm(query))
      return Effect.runPromise(store.completeCallback(query))
    },
    release: (query) => {
      leases.delete(norm(query))
      return Effect.runPromise(store.releaseCallback(query))
    }
  }
/**
 * The lease of the claim a callback runs under. The handler claims a callback by its exact text, or
 * an opening (or void) transaction by its signed fields (`event|status|kind|orderid|client_orderid`),
 * so a redelivery with other bytes cannot run it twice.
 */
function leaseOf(cb: ConfirmedCallback): { claimedAt: number; leaseUntil: number } | undefined {
  const exact = leases.get(norm(cb.raw))
  if (exact !== undefined) return exact
  const suffix = `|${cb.orderid}|${cb.client_orderid}`
  for (const [key, lease] of leases) if (key.startsWith(`event|${cb.status}|`) && key.endsWith(suffix)) return lease
  return undefined
}
/** The transaction's index in its order: the tail of `processor-rrn` (the orderid, padded to 9, then the index). */
function txIndexOf(cb: ConfirmedCallback): number {
  const rrn = new URLSearchParams(norm(cb.raw)).get("processor-rrn") ?? ""
  const padded = cb.orderid.padStart(9, "0")
  const index = rrn.startsWith(padded) ? Number(rrn.slice(padded.length)) : Number.NaN
  if (!Number.isSafeInteger(index)) throw new Error(`callback for ${cb.orderid} without a usable processor-rrn`)
  return index
}

// The run of onCallback a request caused, by the callback's exact query: once the handler answers
// 200 (the store has marked the callback done), the run is recorded as completed.
const runsByQuery = new Map<string, string>()
async function fulfil(cb: ConfirmedCallback): Promise<void> {
  const index = txIndexOf(cb)
  const lease = leaseOf(cb)
  const run = await db.query<{ id: string }>(
    "INSERT INTO fleet_runs (orderid, tx_type, tx_index, pid, claimed_at, lease_until, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    [cb.orderid, cb.type, index, process.pid, lease?.claimedAt ?? null, lease?.leaseUntil ?? null, Date.now()]
  )
  const runId = run.rows[0]!.id
  runsByQuery.set(cb.raw, runId)
  reached("callback")
  try {
    // The merchant's work (an e-mail, a shipment order): a window in which a kill lands mid-handler.
    await sleep(5)
    const inserted = await db.query(
      `INSERT INTO fleet_fulfilments (orderid, tx_index, tx_type, client_orderid, status, amount, worker, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (orderid, tx_index) DO NOTHING RETURNING 1`,
      [cb.orderid, index, cb.type, cb.client_orderid, cb.status, cb.amount, owner, Date.now()]
    )
    await sleep(2)
    await db.query("UPDATE fleet_runs SET finished_at = $2, effect = $3 WHERE id = $1", [runId, Date.now(), inserted.rowCount === 1 ? "fulfilled" : "repeat"])
  } catch (error) {
    // A failed handler gives its claim back (the next delivery may run at once): its lease ends now.
    await db.query("UPDATE fleet_runs SET lease_until = $2 WHERE id = $1", [runId, Date.now()]).catch(() => undefined)
    throw error
  }
}
const handler = handlerClient.callbackHandler({ onCallback: fulfil, leaseMs: SETTINGS.callbackLeaseMs, claims })
const server = createServer((incoming, outgoing) => {
  incoming.resume()
  const url = new URL(`http://127.0.0.1${incoming.url ?? "/"}`)
  const query = url.search.slice(1)
  handler(new Request(url, { method: "GET" }))
    .then(async (response) => {
      const runId = runsByQuery.get(query)
      runsByQuery.delete(query)
      if (runId !== undefined && response.status === 200) await db.query("UPDATE fleet_runs SET completed_at = $2 WHERE id = $1", [runId, Date.now()])
      outgoing.writeHead(response.status, { "content-type": "text/plain" })
      outgoing.end(await response.text())
    })
    .catch(() => {
      outgoing.writeHead(500)
      outgoing.end("failed")
    })
})
server.keepAliveTimeout = 10_000
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
send({ t: "ready", port: (server.address() as AddressInfo).port, pid: process.pid })

// --- recover what a dead instance left --------------------------------------------------------------
const recovered = { claimed: 0, applied: 0, notApplied: 0, unresolved: 0, unknown: 0 }
for (;;) {
  const r = await pay.recover({ olderThanMs: 0, leaseMs: SETTINGS.recoverLeaseMs, settleMs, limit: 200 }).catch(() => undefined)
  if (r === undefined) break
  recovered.claimed += r.claimed
  recovered.applied += r.applied
  recovered.notApplied += r.notApplied
  recovered.unresolved += r.unresolved
  recovered.unknown += r.unknown
  if (r.claimed < 200) break
}
send({ t: "recovered", ...recovered })
// And on a schedule, as docs/fleet.md asks of every instance: an intent a kill left is settled once
// its lease has run out, while the gateway still keeps the order it may have made.
const recovering = setInterval(() => {
  void pay.recover({ olderThanMs: SETTINGS.deadlineMs, leaseMs: SETTINGS.recoverLeaseMs, settleMs, limit: 200 }).catch(() => undefined)
}, SETTINGS.recoverEveryMs)
recovering.unref()

// --- payments --------------------------------------------------------------------------------------
interface Job {
  readonly id: number
  readonly client_orderid: string
  readonly flow: string
  readonly amount: string
  readonly follow_amount: string | null
  readonly card: "approve" | "decline"
  readonly unknowns: number
}
class Transient extends Error {
  constructor(message: string, readonly unknown: boolean) {
    super(message)
  }
}
/** A job that ends without its money flow completing, for a reason the audit accepts (schema.ts). */
class JobEnd extends Error {
  constructor(readonly state: "conflict" | "unknown" | "forgotten", readonly key: string | undefined, reason: string) {
    super(reason)
  }
}
const TRANSIENT = new Set(["OutcomeUnknown", "TransportError", "GatewayServerError", "Timeout", "StoreError", "Cancelled", "AwaitFinalTimeout"])

let stopping = false
async function claim(): Promise<Job | undefined> {
  const now = Date.now()
  const rows = await db.query<Job>(
    `UPDATE fleet_jobs SET owner = $1, lease_until = $2, runs = runs + 1
     WHERE id = (SELECT id FROM fleet_jobs WHERE state = 'pending' AND lease_until <= $3 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, client_orderid, flow, amount, follow_amount, card, unknowns`,
    [owner, now + SETTINGS.jobLeaseMs, now]
  )
  return rows.rows[0]
}

/** One step of a job: a money call under `key`, or (`key` undefined) a wait for the order's final status. */
async function step<T>(job: Job, what: string, key: string | undefined, call: () => Promise<T>): Promise<T> {
  try {
    return key === undefined
      ? await call()
      : await reported(jobCounts, job.client_orderid, { key, op: what, replay: false }, SETTINGS.deadlineMs, call)
  } catch (error) {
    const tag = tagOf(error)
    const code = codeOf(error)
    if (tag === "ReconcileConflict") {
      // A merchant's blind retry, as many retry queues make on any error: the same key must answer the
      // recorded conflict again without sending (the call moved money, or the order moved beside it).
      if (key !== undefined) await reported(jobCounts, job.client_orderid, { key, op: what, replay: false }, SETTINGS.deadlineMs, call).catch(() => undefined)
      throw new JobEnd("conflict", key, `ReconcileConflict on ${what}`)
    }
    if (tag === "OutcomeUnknown" && job.unknowns + 1 >= maxUnknowns) throw new JobEnd("unknown", key, `OutcomeUnknown on ${what}, ${job.unknowns + 1} times`)
    if (TRANSIENT.has(tag)) throw new Transient(tag === "StoreError" ? `StoreError: ${String((error as { reason?: unknown }).reason).slice(0, 60)}` : tag, tag === "OutcomeUnknown")
    // With retention on, the gateway forgets final orders: a follow-up (or a status wait) on one it
    // forgot is refused as for an order that never existed, and the job cannot go on.
    if (retention && code === "order-not-found" && what !== "sale" && what !== "preauth") throw new JobEnd("forgotten", key, `order-not-found on ${what}`)
    throw new Error(`${tag}${code === undefined ? "" : `:${code}`} on ${what}`)
  }
}

async function finalStatus(job: Job, orderid: string | undefined): Promise<{ status: string; orderid: string }> {
  const coid = job.client_orderid
  const final = (await step(job, "final", undefined, () => pay.awaitFinal(orderid === undefined ? { client_orderid: coid } : { client_orderid: coid, orderid }))) as unknown as Record<string, unknown>
  if (final["_tag"] !== "Final") throw new Transient(`NotFinal:${String(final["_tag"])}`, false)
  return { status: String(final["status"]), orderid: String(final["paynet-order-id"]) }
}

const saleFields = (coid: string, amount: string, card: "approve" | "decline") =>
  requests.sale({ client_orderid: coid, amount, currency: "USD", server_callback_url: callbackUrl, credit_card_number: CARDS[card] })

async function runJob(job: Job): Promise<string> {
  const coid = job.client_orderid
  const key = (s: string) => `${coid}:${s}`
  const options = (s: string) => ({ idempotencyKey: key(s), deadlineMs: SETTINGS.deadlineMs })
  const fields = saleFields(coid, job.amount, job.card)
  const opened = job.flow === "preauth-capture"
    ? await step(job, "preauth", key("preauth"), () => pay.preauth(fields, options("preauth")))
    : await step(job, "sale", key("sale"), () => pay.sale(fields, options("sale")))
  const first = await finalStatus(job, (opened as Record<string, unknown>)["paynet-order-id"] as string | undefined)
  if (first.status !== "approved" || job.flow === "sale" || job.follow_amount === null) return first.status
  const follow = { client_orderid: coid, orderid: first.orderid, amount: job.follow_amount, currency: "USD" }
  if (job.flow === "preauth-capture") await step(job, "capture", key("capture"), () => pay.capture(follow, options("capture")))
  else await step(job, "return", key("return"), () => pay.return(follow, options("return")))
  return `${first.status}+${(await finalStatus(job, first.orderid)).status}`
}

const running = new Set<number>()
async function slot(): Promise<void> {
  while (!stopping) {
    const job = await claim().catch(() => undefined)
    if (job === undefined) {
      await sleep(100)
      continue
    }
    running.add(job.id)
    try {
      const result = await runJob(job)
      await db.query("UPDATE fleet_jobs SET state = 'done', result = $3, finished_at = $4, owner = NULL WHERE id = $1 AND owner = $2", [job.id, owner, result, Date.now()])
    } catch (error) {
      if (error instanceof Transient) {
        send({ t: "transient", tag: error.message })
        // Back to the queue, for this or any worker (with the same idempotency keys).
        await db.query(
          "UPDATE fleet_jobs SET owner = NULL, lease_until = $3, unknowns = unknowns + $4 WHERE id = $1 AND owner = $2",
          [job.id, owner, Date.now() + 300, error.unknown ? 1 : 0]
        ).catch(() => undefined)
      } else if (error instanceof JobEnd) {
        send({ t: "job-end", state: error.state, key: error.key })
        await db.query(
          "UPDATE fleet_jobs SET state = $3, error = $4, final_key = $5, finished_at = $6, owner = NULL WHERE id = $1 AND owner = $2",
          [job.id, owner, error.state, error.message.slice(0, 200), error.key ?? null, Date.now()]
        ).catch(() => undefined)
      } else {
        const reason = error instanceof Error ? error.message : String(error)
        send({ t: "unexpected", client_orderid: job.client_orderid, reason })
        await db.query("UPDATE fleet_jobs SET state = 'failed', error = $3, finished_at = $4, owner = NULL WHERE id = $1 AND owner = $2", [job.id, owner, reason.slice(0, 200), Date.now()]).catch(() => undefined)
      }
    } finally {
      running.delete(job.id)
    }
  }
}

const heartbeat = setInterval(() => {
  if (running.size === 0) return
  db.query("UPDATE fleet_jobs SET lease_until = $2 WHERE owner = $1 AND state = 'pending'", [owner, Date.now() + SETTINGS.jobLeaseMs]).catch(() => undefined)
}, SETTINGS.heartbeatMs)

const slots = Array.from({ length: Number(process.env["FLEET_CONCURRENCY"] ?? SETTINGS.concurrency) }, slot)

// --- keys replayed after a restart ----------------------------------------------------------------------
// The calls a dead predecessor of this worker made last, sent again with their keys and the same
// requests, from a client whose memory is empty (as after a restart), while the fleet goes on: each
// must replay, join or prove what was done under its key, never move money a second time.
async function replayKeys(): Promise<void> {
  const counts = new Map<string, Counts>()
  const replayer: Pay = createPayClient({ ...clientOptions, fetch: countingFetch(counts) })
  const rows = await db.query<{ idempotency_key: string; operation: string; client_orderid: string; orderid: string | null; amount: string | null; card: "approve" | "decline" }>(
    `SELECT i.idempotency_key, i.operation, i.client_orderid, i.orderid, i.amount, j.card
     FROM paykit_intents i JOIN fleet_jobs j ON j.client_orderid = i.client_orderid
     WHERE i.owner = ANY($1) ORDER BY i.created_at DESC LIMIT $2`,
    [previousOwners, replays]
  ).catch(() => undefined)
  for (const row of rows?.rows ?? []) {
    if (stopping) return
    const options = { idempotencyKey: row.idempotency_key, deadlineMs: SETTINGS.deadlineMs }
    const amount = row.amount ?? ""
    const call = row.operation === "SALE"
      ? () => replayer.sale(saleFields(row.client_orderid, amount, row.card), options)
      : row.operation === "PREAUTH"
      ? () => replayer.preauth(saleFields(row.client_orderid, amount, row.card), options)
      : row.operation === "CAPTURE" && row.orderid !== null
      ? () => replayer.capture({ client_orderid: row.client_orderid, orderid: row.orderid!, amount, currency: "USD" }, options)
      : row.operation === "RETURN" && row.orderid !== null
      ? () => replayer.return({ client_orderid: row.client_orderid, orderid: row.orderid!, amount, currency: "USD" }, options)
      : undefined
    if (call === undefined) continue
    await reported(counts, row.client_orderid, { key: row.idempotency_key, op: row.operation.toLowerCase(), replay: true }, SETTINGS.deadlineMs, call).catch(() => undefined)
  }
}
const replaying = replays > 0 && previousOwners.length > 0 ? replayKeys().catch(() => undefined) : Promise.resolve()

async function stop(): Promise<void> {
  stopping = true
  await Promise.all([...slots, replaying])
  clearInterval(heartbeat)
  server.closeAllConnections()
  server.close()
  await store.close()
  await db.end()
  process.exit(0)
}
