/**
 * One fleet run: a PostgreSQL database (a temporary server, or a fresh database on the server
 * `databaseUrl` names), the simulator as a process, the callback proxy, and W worker processes that
 * claim the planned payments from the database. Workers are SIGKILLed at the planned points and
 * restarted (each runs `recover()` at start); once every payment is finished the callbacks are
 * flushed, the workers stopped, a final `recover()` run, and the result audited against the
 * simulator's ledger. Everything started here is stopped in `finally`, whatever happened.
 */
import type { ChildProcess } from "node:child_process"
import { createPayClient } from "@paykit/client"
import { openPostgresStore, type PayStoreHandle } from "@paykit/client/store/postgres"
import { testMerchant } from "@paykit/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { startPostgres } from "../../scripts/postgres/server"
import { auditFleet, type Audit, type CallbackRun, type Fulfilment, type JobRow, type SimOrder } from "./audit"
import { planKills, planPayments, type PlannedKill } from "./plan"
import { killChild, nextMessage, spawnChild } from "./processes"
import { startProxy, type ProxyStats } from "./proxy"
import { createRng } from "@paykit/stress/rng"
import { releaseJobs, seedJobs } from "./schema"
import { SETTINGS } from "./settings"

export interface FleetOptions {
  readonly payments: number
  readonly workers: number
  readonly seed: number
  /** A server to use instead of a temporary one (a fresh database is created on it and dropped). */
  readonly databaseUrl?: string | undefined
  /** How many kills (default: one per 50 payments, at least 10, at most 120). */
  readonly kills?: number | undefined
  /** `memory`: each worker dedupes callbacks in its own memory (a broken fleet, for the tests). */
  readonly claims?: "store" | "memory" | undefined
  /** Progress lines (never a secret). */
  readonly log?: ((line: string) => void) | undefined
}

export interface FleetReport extends Audit {
  readonly payments: number
  readonly workers: number
  readonly kills: number
  readonly stuckIntents: number
  /** Intents held more than once: taken over from a dead (or late) holder, or claimed by `recover()`. */
  readonly intentsTakenUpAgain: number
  readonly invariantViolations: number
  readonly killsByPoint: Readonly<Record<string, number>>
  readonly recovered: { claimed: number; applied: number; notApplied: number; unresolved: number }
  readonly finalRecover: { claimed: number; applied: number; notApplied: number; unresolved: number }
  readonly transient: Readonly<Record<string, number>>
  readonly unexpected: ReadonlyArray<string>
  readonly workerCrashes: number
  readonly proxy: ProxyStats
  readonly elapsedMs: number
  /** Worker process starts (first starts and restarts) until their callback endpoint was up: median and max ms. */
  readonly workerStartMs: { readonly median: number; readonly max: number; readonly starts: number }
}

interface Slot {
  readonly index: number
  child: ChildProcess | undefined
  port: number | undefined
  pid: number | undefined
  killing: boolean
  armedPoint: string | undefined
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function defaultKills(payments: number): number {
  return Math.min(120, Math.max(10, Math.round(payments / 50)))
}

export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const log = options.log ?? (() => undefined)
  const started = Date.now()
  const plan = planPayments(options.payments, options.seed)
  const killPlan: PlannedKill[] = planKills(options.kills ?? defaultKills(options.payments), options.payments, options.workers, options.seed)
  const cleanup: Array<() => Promise<unknown>> = []
  const slots: Slot[] = []
  let stopping = false
  try {
    // --- the database -------------------------------------------------------------------------------
    let serverUrl = options.databaseUrl
    if (serverUrl === undefined) {
      const server = await startPostgres({ maxConnections: 30 + options.workers * (SETTINGS.storePoolMax + SETTINGS.fleetPoolMax + 4) })
      cleanup.push(() => server.stop())
      serverUrl = server.url
      log(`PostgreSQL ${server.version} started on port ${server.port}`)
    }
    const dbName = `paykit_fleet_${options.seed}_${Date.now().toString(36)}`
    const admin = new pg.Pool({ connectionString: serverUrl, max: 1 })
    admin.on("error", () => undefined)
    cleanup.push(() => admin.end())
    await admin.query(`CREATE DATABASE ${dbName}`)
    cleanup.push(() => admin.query(`DROP DATABASE IF EXISTS ${dbName}`))
    const dbUrl = new URL(serverUrl)
    dbUrl.pathname = `/${dbName}`
    const databaseUrl = dbUrl.href
    const db = new pg.Pool({ connectionString: databaseUrl, max: 3 })
    db.on("error", () => undefined)
    cleanup.push(() => db.end())
    const store: PayStoreHandle = await openPostgresStore({ connectionString: Redacted.make(databaseUrl), instanceId: "fleet-run", poolMax: 2 })
    cleanup.push(() => store.close())
    await seedJobs(db, plan)
    log(`database ${dbName}: migrated, ${plan.length} payments queued`)

    // --- the simulator and the proxy ------------------------------------------------------------------
    const sim = spawnChild("sim-process.ts", { FLEET_PROCESSING_DELAY_MS: String(SETTINGS.processingDelayMs) })
    cleanup.push(() => killChild(sim))
    const simUrl = String((await nextMessage(sim, "ready", 60_000))["url"])
    const proxy = await startProxy(createRng(options.seed ^ 0x5bd1e995), () => slots.filter((s) => s.port !== undefined).map((s) => s.port!))
    cleanup.push(() => proxy.close())
    log(`simulator on ${simUrl}, callback proxy on ${proxy.url}`)

    // --- the workers -------------------------------------------------------------------------------------
    const kills: Array<{ pid: number; at: number; point: string }> = []
    const recovered = { claimed: 0, applied: 0, notApplied: 0, unresolved: 0 }
    const transient: Record<string, number> = {}
    const unexpected: string[] = []
    let workerCrashes = 0
    const startMs: number[] = []
    const env = (slot: Slot) => ({
      FLEET_WORKER: `w${slot.index + 1}`, FLEET_DATABASE_URL: databaseUrl, FLEET_SIM_URL: simUrl, FLEET_CALLBACK_URL: proxy.url,
      FLEET_CLAIMS: options.claims ?? "store"
    })
    const startWorker = (slot: Slot) => {
      const child = spawnChild("worker.ts", env(slot))
      const spawnedAt = Date.now()
      slot.child = child
      slot.pid = child.pid
      child.on("message", (m: Record<string, unknown>) => {
        if (m["t"] === "ready") {
          slot.port = Number(m["port"])
          startMs.push(Date.now() - spawnedAt)
        }
        else if (m["t"] === "recovered") for (const k of Object.keys(recovered) as Array<keyof typeof recovered>) recovered[k] += Number(m[k] ?? 0)
        else if (m["t"] === "transient") transient[String(m["tag"])] = (transient[String(m["tag"])] ?? 0) + 1
        else if (m["t"] === "unexpected" && unexpected.length < 20) unexpected.push(`${String(m["client_orderid"])}: ${String(m["reason"])}`)
        else if (m["t"] === "dying") slot.armedPoint = `${String(m["point"])}`
      })
      child.once("exit", (code, signal) => {
        slot.port = undefined
        if (slot.child !== child) return
        slot.child = undefined
        if (signal === "SIGKILL" && !stopping) kills.push({ pid: child.pid ?? -1, at: Date.now(), point: slot.armedPoint ?? "anywhere" })
        else if (!stopping) {
          workerCrashes++
          log(`worker w${slot.index + 1} exited by itself (${code ?? signal})`)
        }
        slot.killing = false
        slot.armedPoint = undefined
        if (!stopping) setTimeout(() => startWorker(slot), 100 + Math.floor(Math.random() * 400))
      })
    }
    cleanup.push(async () => {
      stopping = true
      await Promise.all(slots.map((s) => (s.child === undefined ? undefined : killChild(s.child))))
    })
    for (let i = 0; i < options.workers; i++) {
      const slot: Slot = { index: i, child: undefined, port: undefined, pid: undefined, killing: false, armedPoint: undefined }
      slots.push(slot)
      startWorker(slot)
    }

    const kill = (k: PlannedKill) => {
      const live = slots.filter((s) => s.port !== undefined && !s.killing && s.child !== undefined)
      if (live.length === 0) return false
      const slot = live[k.worker % live.length]!
      const child = slot.child!
      slot.killing = true
      if (k.point === "anywhere") setTimeout(() => child.kill("SIGKILL"), k.delayMs)
      else {
        child.send({ t: "arm", point: k.point, delayMs: k.delayMs })
        // The armed point may not come (no callback due): then it dies wherever it is.
        setTimeout(() => child.kill("SIGKILL"), 4_000)
      }
      return true
    }

    // --- progress: kills, the simulator's clock, the end -------------------------------------------------
    const count = async () => Number((await db.query("SELECT count(*) AS n FROM fleet_jobs WHERE state <> 'pending'")).rows[0].n)
    const advance = (ms: number) => fetch(`${simUrl}/__sim/clock/advance?ms=${ms}`, { method: "POST" }).then((r) => r.arrayBuffer()).catch(() => undefined)
    // Payments are released to the queue ahead of the next kill by one window of work only, so a
    // fast fleet cannot finish before its kills have happened.
    const window = options.workers * SETTINGS.concurrency + Math.ceil(plan.length / Math.max(1, killPlan.length))
    let released = 0
    let next = 0
    let finished = 0
    let lastProgress = Date.now()
    let lastLog = 0
    let lastAdvance = Date.now()
    // The end: every payment finished and every planned kill made (a kill after the last payment
    // still lands among callbacks in flight and the next recover()).
    while (finished < plan.length || next < killPlan.length) {
      await sleep(200)
      const now = Date.now()
      const n = await count()
      if (n > finished) lastProgress = now
      finished = n
      while (next < killPlan.length && killPlan[next]!.afterPayments <= finished && kill(killPlan[next]!)) next++
      const limit = next < killPlan.length ? Math.min(plan.length, killPlan[next]!.afterPayments + window) : plan.length
      if (limit > released) {
        await releaseJobs(db, limit)
        released = limit
      }
      // Callback retries are due on the simulator's clock (10 s, 20 s, ...): move it along.
      if (now - lastAdvance >= 2_000) {
        lastAdvance = now
        await advance(10_000)
      }
      if (now - lastLog >= 5_000) {
        lastLog = now
        log(`${finished}/${plan.length} payments finished, ${kills.length} kills, ${Object.values(transient).reduce((a, b) => a + b, 0)} transient failures ridden out`)
      }
      if (now - lastProgress > 120_000) {
        log("no progress for 120 s: auditing what there is")
        break
      }
    }
    // Any kill still armed lands or times out before the flush.
    while (slots.some((s) => s.killing)) await sleep(100)
    while (slots.some((s) => s.port === undefined) && Date.now() - lastProgress < 180_000) await sleep(100)

    log(`all payments finished (${((Date.now() - started) / 1000).toFixed(1)} s); flushing callbacks`)
    // --- flush: every callback delivered, to a calm proxy ----------------------------------------------
    proxy.calm()
    // Each final transaction at the gateway needs its fulfilment: move the simulator's clock until
    // every retry has fallen due and been answered (or the rounds run out and the audit says so).
    const outstanding = async () => {
      const orders = (await (await fetch(`${simUrl}/__sim/orders`)).json()) as SimOrder[]
      const final = orders.flatMap((o) => o.transactions).filter((t) => ["sale", "preauth", "capture", "return"].includes(t.type) && t.status !== "processing").length
      return final - Number((await db.query("SELECT count(*) AS n FROM fleet_fulfilments")).rows[0].n)
    }
    // A killed handler's callback waits for its claim's lease (real time) before anyone may run it.
    const flushUntil = Date.now() + SETTINGS.callbackLeaseMs * 4 + 30_000
    for (let round = 0; Date.now() < flushUntil; round++) {
      await advance(3_600_000)
      await sleep(2_000)
      const left = await outstanding()
      if (left <= 0) break
      if (round % 5 === 0) log(`flush: ${left} transaction outcomes not recorded yet`)
    }
    stopping = true
    await Promise.all(slots.map(async (s) => {
      const child = s.child
      if (child === undefined) return
      child.send({ t: "stop" })
      await Promise.race([new Promise((resolve) => child.once("exit", resolve)), sleep(15_000).then(() => killChild(child))])
    }))

    log(`workers stopped (${((Date.now() - started) / 1000).toFixed(1)} s)`)
    // --- the final recover, once every lease has run out ---------------------------------------------
    const leaseEnd = Number((await db.query("SELECT coalesce(max(lease_until), 0) AS t FROM paykit_intents WHERE finished_at IS NULL")).rows[0].t)
    if (leaseEnd > Date.now()) await sleep(leaseEnd - Date.now() + 50)
    const pay = createPayClient({
      baseUrl: simUrl, login: testMerchant.login, controlKey: testMerchant.controlKey, privateKeyPem: testMerchant.privateKeyPem,
      endpointId: testMerchant.endpointId, store, timeoutMs: SETTINGS.timeoutMs
    })
    const finalRecover = { claimed: 0, applied: 0, notApplied: 0, unresolved: 0 }
    for (let round = 0; round < 50; round++) {
      const r = await pay.recover({ olderThanMs: 0, leaseMs: 1, settleMs: SETTINGS.timeoutMs, limit: 500 })
      for (const k of Object.keys(finalRecover) as Array<keyof typeof finalRecover>) finalRecover[k] += r[k]
      if (r.claimed - r.unresolved === 0) break
      await sleep(5)
    }
    log(`final recover(): ${JSON.stringify(finalRecover)}`)
    const stuckIntents = Number((await db.query("SELECT count(*) AS n FROM paykit_intents WHERE finished_at IS NULL")).rows[0].n)
    const intentsTakenUpAgain = Number((await db.query("SELECT count(*) AS n FROM paykit_intents WHERE attempts > 1")).rows[0].n)

    // --- the audit ------------------------------------------------------------------------------------
    const orders = (await (await fetch(`${simUrl}/__sim/orders`)).json()) as SimOrder[]
    const invariants = (await (await fetch(`${simUrl}/__sim/invariants`)).json()) as unknown[]
    const rows = async <T>(sql: string) => (await db.query(sql)).rows as T[]
    const audit = auditFleet({
      plan,
      orders,
      fulfilments: await rows<Fulfilment>("SELECT orderid, tx_type, status, amount FROM fleet_fulfilments"),
      runs: (await rows<CallbackRun>("SELECT orderid, tx_type, pid, started_at, finished_at, completed_at, effect FROM fleet_runs")).map((r) => ({
        ...r,
        started_at: Number(r.started_at),
        finished_at: r.finished_at === null ? null : Number(r.finished_at),
        completed_at: r.completed_at === null ? null : Number(r.completed_at)
      })),
      jobs: await rows<JobRow>("SELECT id, state, error FROM fleet_jobs")
    })
    const killsByPoint: Record<string, number> = {}
    for (const k of kills) killsByPoint[k.point] = (killsByPoint[k.point] ?? 0) + 1
    return {
      ...audit,
      payments: plan.length,
      workers: options.workers,
      kills: kills.length,
      stuckIntents,
      intentsTakenUpAgain,
      invariantViolations: invariants.length,
      killsByPoint,
      recovered,
      finalRecover,
      transient,
      unexpected,
      workerCrashes,
      proxy: { ...proxy.stats, downBy: { ...proxy.stats.downBy } },
      elapsedMs: Date.now() - started,
      workerStartMs: { median: [...startMs].sort((a, b) => a - b)[Math.floor(startMs.length / 2)] ?? 0, max: Math.max(0, ...startMs), starts: startMs.length }
    }
  } finally {
    stopping = true
    for (const step of cleanup.reverse()) await step().catch(() => undefined)
  }
}

/** The verdict line (DESIGN.md, "Commands the project's acceptance checks run"). */
export function fleetLine(r: FleetReport): string {
  return `fleet: payments ${r.payments}, workers ${r.workers}, kills ${r.kills}, double charges ${r.doubleCharges}, lost outcomes ${r.lostOutcomes}, duplicate fulfilments ${r.duplicateFulfilments}, stuck intents ${r.stuckIntents}`
}

/** Clean: every count of the line is 0, and nothing else the audit checks went wrong. */
export function fleetClean(r: FleetReport): boolean {
  return r.doubleCharges + r.lostOutcomes + r.duplicateFulfilments + r.stuckIntents + r.amountMismatches + r.invariantViolations + r.failedJobs + r.workerCrashes === 0
}
