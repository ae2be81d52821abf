/**
 * One merchant instance of the fleet, as its own process: a PayKit client on the shared PostgreSQL
 * store, a callback endpoint whose `onCallback` fulfils each transaction once (unique key in
 * `fleet_fulfilments`), and a loop that claims payments from `fleet_jobs` and runs them. At start it
 * runs `recover()` for whatever a dead instance left unfinished.
 *
 * The run kills it with SIGKILL: at a random moment, or (armed through IPC) at a chosen point —
 * a few ms after a money-moving request was handed to fetch (bytes in flight), or inside `onCallback`
 * before or after its effect. Nothing here cleans up on the way down: that is the point.
 *
 * Environment (never argv, which `ps` shows): FLEET_WORKER, FLEET_DATABASE_URL, FLEET_SIM_URL,
 * FLEET_CALLBACK_URL, FLEET_CLAIMS (`store`, or `memory` for the broken fleet the tests audit).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createPayClient, memoryCallbackStore, type ConfirmedCallback } from "@paykit/client"
import { openPostgresStore } from "@paykit/client/store/postgres"
import { requests, testMerchant } from "@paykit/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { CARDS, SETTINGS } from "./settings"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`worker: ${name} is not set`)
  return value
}
const name = env("FLEET_WORKER")
const databaseUrl = Redacted.make(env("FLEET_DATABASE_URL"))
const simUrl = env("FLEET_SIM_URL")
const callbackUrl = env("FLEET_CALLBACK_URL")
const claimsMode = process.env["FLEET_CLAIMS"] ?? "store"
const owner = `${name}:${process.pid}`
const send = (message: Record<string, unknown>) => process.send?.(message)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

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

// --- the client on the shared store ---------------------------------------------------------------
const store = await openPostgresStore({ connectionString: databaseUrl, instanceId: owner, poolMax: SETTINGS.storePoolMax })
const db = new pg.Pool({ connectionString: Redacted.value(databaseUrl), max: SETTINGS.fleetPoolMax })
db.on("error", () => undefined)
const isSend = (url: string) => !url.includes("/status/")
const pay = createPayClient({
  baseUrl: simUrl,
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  privateKeyPem: testMerchant.privateKeyPem,
  endpointId: testMerchant.endpointId,
  store,
  intentLeaseMs: SETTINGS.intentLeaseMs,
  timeoutMs: SETTINGS.timeoutMs,
  retry: { maxRetries: 3, baseDelayMs: 25, maxDelayMs: 400 },
  reconcile: { settleMs: SETTINGS.timeoutMs, pollIntervalMs: 200 },
  poll: { fastIntervalMs: 50, fastPhaseMs: 30_000, slowIntervalMs: 500, deadlineMs: 30_000 },
  fetch: (request: Request) => {
    const sent = fetch(request)
    if (isSend(request.url)) reached("send")
    return sent
  }
})

// --- callbacks: fulfil each transaction once ----------------------------------------------------
// The run of onCallback a request caused, by the callback's exact query: once the handler answers
// 200 (the store has marked the callback done), the run is recorded as completed.
const runsByQuery = new Map<string, string>()
async function fulfil(cb: ConfirmedCallback): Promise<void> {
  const run = await db.query<{ id: string }>("INSERT INTO fleet_runs (orderid, tx_type, pid, started_at) VALUES ($1, $2, $3, $4) RETURNING id", [cb.orderid, cb.type, process.pid, Date.now()])
  runsByQuery.set(cb.raw, run.rows[0]!.id)
  reached("callback")
  // The merchant's work (an e-mail, a shipment order): a window in which a kill lands mid-handler.
  await sleep(5)
  const inserted = await db.query(
    `INSERT INTO fleet_fulfilments (orderid, tx_type, client_orderid, status, amount, worker, at) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (orderid, tx_type) DO NOTHING RETURNING 1`,
    [cb.orderid, cb.type, cb.client_orderid, cb.status, cb.amount, owner, Date.now()]
  )
  await sleep(2)
  await db.query("UPDATE fleet_runs SET finished_at = $2, effect = $3 WHERE id = $1", [run.rows[0]!.id, Date.now(), inserted.rowCount === 1 ? "fulfilled" : "repeat"])
}
const handler = pay.callbackHandler({
  onCallback: fulfil,
  leaseMs: SETTINGS.callbackLeaseMs,
  ...(claimsMode === "memory" ? { claims: memoryCallbackStore() } : {})
})
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
const recovered = { claimed: 0, applied: 0, notApplied: 0, unresolved: 0 }
for (;;) {
  const r = await pay.recover({ olderThanMs: 0, leaseMs: 30_000, settleMs: SETTINGS.timeoutMs, limit: 200 }).catch(() => undefined)
  if (r === undefined) break
  recovered.claimed += r.claimed
  recovered.applied += r.applied
  recovered.notApplied += r.notApplied
  recovered.unresolved += r.unresolved
  if (r.claimed < 200) break
}
send({ t: "recovered", ...recovered })

// --- payments --------------------------------------------------------------------------------------
interface Job {
  readonly id: number
  readonly client_orderid: string
  readonly flow: string
  readonly amount: string
  readonly follow_amount: string | null
  readonly card: "approve" | "decline"
}
class Transient extends Error {}
const TRANSIENT = new Set(["OutcomeUnknown", "TransportError", "GatewayServerError", "Timeout", "StoreError", "Cancelled", "AwaitFinalTimeout"])
const tagOf = (e: unknown) => (typeof e === "object" && e !== null && typeof (e as { _tag?: unknown })._tag === "string" ? (e as { _tag: string })._tag : "untyped")

let stopping = false
async function claim(): Promise<Job | undefined> {
  const now = Date.now()
  const rows = await db.query<Job>(
    `UPDATE fleet_jobs SET owner = $1, lease_until = $2, runs = runs + 1
     WHERE id = (SELECT id FROM fleet_jobs WHERE state = 'pending' AND lease_until <= $3 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, client_orderid, flow, amount, follow_amount, card`,
    [owner, now + SETTINGS.jobLeaseMs, now]
  )
  return rows.rows[0]
}

async function money<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    const tag = tagOf(error)
    if (TRANSIENT.has(tag)) throw new Transient(tag === "StoreError" ? `StoreError: ${String((error as { reason?: unknown }).reason).slice(0, 60)}` : tag)
    const code = (error as { errorCode?: unknown }).errorCode
    throw new Error(`${tag}${typeof code === "string" ? `:${code}` : ""}`)
  }
}

async function finalStatus(clientOrderId: string, orderid: string | undefined): Promise<{ status: string; orderid: string }> {
  const final = (await money(() => pay.awaitFinal(orderid === undefined ? { client_orderid: clientOrderId } : { client_orderid: clientOrderId, orderid }))) as unknown as Record<string, unknown>
  if (final["_tag"] !== "Final") throw new Transient(`NotFinal:${String(final["_tag"])}`)
  return { status: String(final["status"]), orderid: String(final["paynet-order-id"]) }
}

async function runJob(job: Job): Promise<string> {
  const coid = job.client_orderid
  const key = (step: string) => ({ idempotencyKey: `${coid}:${step}`, deadlineMs: SETTINGS.deadlineMs })
  const fields = requests.sale({ client_orderid: coid, amount: job.amount, currency: "USD", server_callback_url: callbackUrl, credit_card_number: CARDS[job.card] })
  const opened = job.flow === "preauth-capture"
    ? await money(() => pay.preauth(fields, key("preauth")))
    : await money(() => pay.sale(fields, key("sale")))
  const first = await finalStatus(coid, (opened as Record<string, unknown>)["paynet-order-id"] as string | undefined)
  if (first.status !== "approved" || job.flow === "sale" || job.follow_amount === null) return first.status
  const follow = { client_orderid: coid, orderid: first.orderid, amount: job.follow_amount, currency: "USD" }
  await money(() => (job.flow === "preauth-capture" ? pay.capture(follow, key("capture")) : pay.return(follow, key("return"))))
  return `${first.status}+${(await finalStatus(coid, first.orderid)).status}`
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
        await db.query("UPDATE fleet_jobs SET owner = NULL, lease_until = $3 WHERE id = $1 AND owner = $2", [job.id, owner, Date.now() + 300]).catch(() => undefined)
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

async function stop(): Promise<void> {
  stopping = true
  await Promise.all(slots)
  clearInterval(heartbeat)
  server.closeAllConnections()
  server.close()
  await store.close()
  await db.end()
  process.exit(0)
}
