/**
 * One fleet run: a PostgreSQL database (a temporary server, or a fresh database on the server
 * `databaseUrl` names), the simulator as a process, the callback proxy, a stalling database proxy in
 * front of each worker, and W worker processes that claim the planned payments from the database.
 * Workers are SIGKILLed at the planned points and restarted (each runs `recover()` at start, then
 * replays keys its predecessors used); database stalls, late sends, lost replies and back-office
 * captures happen as the faults say. Once every payment has ended the faults stop, the callbacks are
 * flushed, the workers stopped, a final `recover()` run, and the result audited against the
 * simulator's ledger. Everything started here is stopped in `finally`, whatever happened; with
 * `keep`, the database and the simulator's final state stay behind for another tool to audit.
 */
import type { ChildProcess } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { createPayClient } from "@paykit/client"
import { openPostgresStore, type PayStoreHandle } from "@paykit/client/store/postgres"
import { testMerchant } from "@paykit/testkit"
import { Redacted } from "effect"
import pg from "pg"
import { startPostgres, type PostgresServer } from "../../scripts/postgres/server"
import { auditFleet, type Audit, type CallbackRun, type Fulfilment, type JobRow, type SimOrder } from "./audit"
import { bundleChildren } from "./bundle"
import { startDbProxy, type DbProxy } from "./db-proxy"
import { DEFAULT_FAULTS, notFoundBound, settleFor, simulatorRules, type FleetFaults } from "./faults"
import { planBackOffice, planKills, planPayments, planStalls, type PlannedKill, type PlannedStall } from "./plan"
import { FLEET_DIR, killChild, nextMessage, spawnChild, type Message } from "./processes"
import { startProxy, type ProxyStats } from "./proxy"
import { createRng } from "@paykit/stress/rng"
import { releaseJobs, seedJobs } from "./schema"
import { masker, maskUrl } from "./secrets"
import { SETTINGS, SIM_CLOCK_MAX_RATE } from "./settings"

export interface FleetOptions {
  readonly payments: number
  readonly workers: number
  readonly seed: number
  /** A server to use instead of a temporary one (a fresh database is created on it, and dropped unless kept). */
  readonly databaseUrl?: string | undefined
  /** How many kills (default: one per 50 payments, at least 10, at most 120). */
  readonly kills?: number | undefined
  /** The faults besides the kills and the callback proxy (default {@link DEFAULT_FAULTS}). */
  readonly faults?: FleetFaults | undefined
  /** `memory`: each worker dedupes callbacks in its own memory (a broken fleet, for the tests). */
  readonly claims?: "store" | "memory" | undefined
  /**
   * A directory (created if missing, must be empty) to keep the evidence in: the database (the
   * temporary server's data directory, or the database on the given server, not dropped), the
   * simulator's orders, callbacks and snapshot, and the run's report, as JSON.
   */
  readonly keep?: string | undefined
  /** Progress lines (never a secret: each goes through the run's masker). */
  readonly log?: ((line: string) => void) | undefined
}

/** What the workers reported of their money calls. */
export interface CallFigures {
  /** Money calls reported (job steps and replays). */
  calls: number
  /** How they ended, by tag (`ok`, `OutcomeUnknown`, `ReconcileConflict`, ...). */
  byTag: Record<string, number>
  /** Calls that took longer than their deadline plus {@link DEADLINE_SLACK_MS}, and by how much the longest did. */
  pastDeadline: number
  longestOverMs: number
}

/** The key replays of restarted workers. */
export interface ReplayFigures {
  replays: number
  byTag: Record<string, number>
  /** Replays that sent a money-moving request to the gateway (a provable not-sent re-opened, or a second send). */
  sent: number
  /** A few of those: key, answer, requests. */
  sentExamples: string[]
}

export interface FleetReport extends Audit {
  readonly payments: number
  readonly workers: number
  readonly kills: number
  readonly stuckIntents: number
  /** Same-key calls answered with the recorded `ReconcileConflict` without a request to the gateway. */
  readonly conflictsReplayed: number
  /**
   * Keys whose outcome was left unknown for a person: those of jobs that ended `unknown`, and intents
   * the store records as `OutcomeUnknown`, unless the store knows their outcome by the end.
   */
  readonly unknownLeft: number
  /**
   * Intents `recover()` recorded as unknown for a person (`order-not-found` too long after their first
   * send to prove anything), with how many of them the gateway really had an order for (paid, then
   * forgotten) and how many it never saw: the protocol cannot tell the two apart, the audit can.
   */
  readonly unknownRecorded: { readonly total: number; readonly orderAtGateway: number; readonly neverAtGateway: number }
  /** Keys a job gave up on as unknown whose outcome the store knew by the end (settled by `recover()` or another call). */
  readonly unknownSettled: number
  /** Intents the store records as ending in `ReconcileConflict`. */
  readonly conflictsRecorded: number
  /** Intents held more than once: taken over from a dead (or late) holder, or claimed by `recover()`. */
  readonly intentsTakenUpAgain: number
  readonly invariantViolations: number
  readonly killsByPoint: Readonly<Record<string, number>>
  readonly recovered: { claimed: number; applied: number; notApplied: number; unresolved: number; unknown: number }
  readonly finalRecover: { claimed: number; applied: number; notApplied: number; unresolved: number; unknown: number }
  readonly transient: Readonly<Record<string, number>>
  readonly unexpected: ReadonlyArray<string>
  /** Lines the run itself found wrong beside the audit (a conflict answered without a recorded one, ...). */
  readonly findings: ReadonlyArray<string>
  readonly workerCrashes: number
  readonly proxy: ProxyStats
  readonly faults: FleetFaults
  readonly dbStalls: { readonly planned: number; readonly made: number; readonly stalledMs: number }
  readonly backOffice: { readonly planned: number; readonly sent: number; readonly byAnswer: Readonly<Record<string, number>> }
  /** Orders the simulator forgot (retention). */
  readonly forgottenOrders: number
  readonly calls: CallFigures
  readonly replays: ReplayFigures
  readonly elapsedMs: number
  /** Worker process starts (first starts and restarts) until their callback endpoint was up: median and max ms. */
  readonly workerStartMs: { readonly median: number; readonly max: number; readonly starts: number }
  /** Where the evidence was kept (`keep`), if it was. */
  readonly keptIn?: string | undefined
}

/**
 * The failure tag `recover()` records for an intent left unknown for a person: `order-not-found`
 * too long after its first send to prove it never landed (packages/client recover.ts).
 */
const UNPROVEN = "OrderNotFoundUnproven"

/** A call may end this much past its deadline before it counts as past it (timers and a loaded machine). */
export const DEADLINE_SLACK_MS = 1_000

interface Slot {
  readonly index: number
  child: ChildProcess | undefined
  port: number | undefined
  pid: number | undefined
  killing: boolean
  armedPoint: string | undefined
  /** The owners (`wN:pid`) of this slot's earlier processes, whose keys a restart replays. */
  readonly owners: string[]
  db: DbProxy | undefined
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function defaultKills(payments: number): number {
  return Math.min(120, Math.max(10, Math.round(payments / 50)))
}

const count = (map: Record<string, number>, key: string) => {
  map[key] = (map[key] ?? 0) + 1
}

export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  // Every line goes through the masker of every database URL known so far.
  let mask = masker([options.databaseUrl])
  const log = (line: string) => options.log?.(mask(line))
  const started = Date.now()
  const faults = options.faults ?? DEFAULT_FAULTS
  const plan = planPayments(options.payments, options.seed)
  const killPlan: PlannedKill[] = planKills(options.kills ?? defaultKills(options.payments), options.payments, options.workers, options.seed)
  const stallPlan: PlannedStall[] = planStalls(faults.dbStalls, options.payments, options.workers, faults.dbStallMs, options.seed)
  const backOfficePlan = planBackOffice(plan, faults.backOffice, options.seed)
  const keepDir = options.keep === undefined ? undefined : resolve(options.keep)
  if (keepDir !== undefined) {
    mkdirSync(keepDir, { recursive: true })
    if (readdirSync(keepDir).length > 0) throw new Error(`--keep ${keepDir}: the directory is not empty`)
  }
  const cleanup: Array<() => Promise<unknown>> = []
  const slots: Slot[] = []
  let stopping = false
  let server: PostgresServer | undefined
  // With `keep`, the database stays whatever happens to the run; the simulator's state once it is written.
  const keptDatabase = keepDir !== undefined
  let simKept = false
  try {
    const bundles = await bundleChildren(FLEET_DIR, ["worker.ts", "sim-process.ts"])
    cleanup.push(async () => bundles.remove())

    // --- the database -------------------------------------------------------------------------------
    let serverUrl = options.databaseUrl
    if (serverUrl === undefined) {
      server = await startPostgres({ maxConnections: 30 + options.workers * (SETTINGS.storePoolMax + SETTINGS.fleetPoolMax + 4) })
      const s = server
      cleanup.push(() => s.stop({ keepDataIn: keptDatabase ? join(keepDir!, "pgdata") : undefined }))
      serverUrl = server.url
      log(`PostgreSQL ${server.version} started on port ${server.port}`)
    }
    mask = masker([options.databaseUrl, serverUrl])
    const dbName = `paykit_fleet_${options.seed}_${Date.now().toString(36)}`
    const admin = new pg.Pool({ connectionString: serverUrl, max: 1 })
    admin.on("error", () => undefined)
    cleanup.push(() => admin.end())
    await admin.query(`CREATE DATABASE ${dbName}`)
    cleanup.push(() => (keptDatabase ? Promise.resolve() : admin.query(`DROP DATABASE IF EXISTS ${dbName}`)))
    const dbUrl = new URL(serverUrl)
    dbUrl.pathname = `/${dbName}`
    const databaseUrl = dbUrl.href
    const db = new pg.Pool({ connectionString: databaseUrl, max: 3 })
    db.on("error", () => undefined)
    cleanup.push(() => db.end())
    const rows = async <T>(sql: string) => (await db.query(sql)).rows as T[]
    const store: PayStoreHandle = await openPostgresStore({ connectionString: Redacted.make(databaseUrl), instanceId: "fleet-run", poolMax: 2 })
    cleanup.push(() => store.close())
    await seedJobs(db, plan)
    log(`database ${dbName} on ${maskUrl(serverUrl)}: migrated, ${plan.length} payments queued`)

    // --- the simulator and the proxies ----------------------------------------------------------------
    const sim = spawnChild(bundles.path("sim-process.ts"), {
      FLEET_PROCESSING_DELAY_MS: String(SETTINGS.processingDelayMs),
      FLEET_RETENTION_MAX_ORDERS: faults.retention === undefined ? "" : String(faults.retention),
      // On the simulator's clock, which runs faster than real time (settings.ts SIM_CLOCK_MAX_RATE):
      // each final order stays at least `retentionMs` of real time, what the workers' bound assumes.
      FLEET_RETENTION_MAX_AGE_MS: faults.retentionMs === undefined ? "" : String(faults.retentionMs * SIM_CLOCK_MAX_RATE)
    })
    cleanup.push(() => killChild(sim))
    const keepSimulator = async () => {
      if (keepDir === undefined || simKept || sim.exitCode !== null || sim.signalCode !== null) return
      sim.send({ t: "keep", dir: keepDir })
      await nextMessage(sim, "kept", 120_000)
      simKept = true
    }
    // A run that fails still leaves the simulator's state beside its database.
    cleanup.push(keepSimulator)
    const simUrl = String((await nextMessage(sim, "ready", 60_000))["url"])
    const simFaults = (body: unknown) =>
      fetch(`${simUrl}/__sim/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (r) => {
        if (!r.ok) throw new Error(`the simulator refused the fault rules: ${r.status} ${await r.text()}`)
      })
    const rules = simulatorRules(faults)
    if (rules.length > 0) await simFaults(rules)
    const backOffice = { planned: backOfficePlan.length, sent: 0, byAnswer: {} as Record<string, number> }
    sim.on("message", (m: Message) => {
      if (m.t !== "back-office") return
      backOffice.sent++
      count(backOffice.byAnswer, String(m["answer"]))
    })
    if (backOfficePlan.length > 0) sim.send({ t: "back-office", captures: backOfficePlan })
    const proxy = await startProxy(createRng(options.seed ^ 0x5bd1e995), () => slots.filter((s) => s.port !== undefined).map((s) => s.port!))
    cleanup.push(() => proxy.close())
    log(`simulator on ${simUrl}, callback proxy on ${proxy.url}${rules.length > 0 ? `, ${rules.length} fault rules` : ""}`)

    // --- the workers -------------------------------------------------------------------------------------
    const kills: Array<{ pid: number; at: number; point: string }> = []
    const recovered = { claimed: 0, applied: 0, notApplied: 0, unresolved: 0, unknown: 0 }
    const transient: Record<string, number> = {}
    const unexpected: string[] = []
    const findings: string[] = []
    const calls: CallFigures = { calls: 0, byTag: {}, pastDeadline: 0, longestOverMs: 0 }
    const replays: ReplayFigures = { replays: 0, byTag: {}, sent: 0, sentExamples: [] }
    /** Keys answered `ReconcileConflict` without a request to the gateway, and how often. */
    const conflictAnswers = new Map<string, number>()
    const unknownKeys = new Set<string>()
    let workerCrashes = 0
    const startMs: number[] = []
    const dbTarget = new URL(databaseUrl)
    // The stalls are the store's: its pool goes through the slot's proxy; the merchant's own tables
    // (the job queue, the fulfilments) stay reachable, as a partition between an app and one
    // database would leave another, so what a stall shows is the payment protocol's behaviour.
    const storeUrl = (slot: Slot) => {
      if (slot.db === undefined) return databaseUrl
      const u = new URL(databaseUrl)
      u.hostname = "127.0.0.1"
      u.port = String(slot.db.port)
      return u.href
    }
    const env = (slot: Slot) => ({
      FLEET_WORKER: `w${slot.index + 1}`, FLEET_DATABASE_URL: databaseUrl, FLEET_STORE_DATABASE_URL: storeUrl(slot), FLEET_SIM_URL: simUrl, FLEET_CALLBACK_URL: proxy.url,
      FLEET_CLAIMS: options.claims ?? "store", FLEET_RETENTION: faults.retention === undefined && faults.retentionMs === undefined ? "off" : "on",
      FLEET_NOT_FOUND_MS: notFoundBound(faults) === undefined ? "" : String(notFoundBound(faults)),
      FLEET_SETTLE_MS: String(settleFor(faults, SETTINGS.timeoutMs)),
      FLEET_REPLAYS: String(faults.replays), FLEET_PREVIOUS_OWNERS: slot.owners.join(","), FLEET_MAX_UNKNOWNS: String(SETTINGS.maxUnknowns),
      // With `keep`, each worker traces its requests to the gateway there (evidence of what it asked and was told).
      FLEET_TRACE_DIR: keepDir ?? ""
    })
    const onCall = (m: Message) => {
      if (keepDir !== undefined) appendFileSync(join(keepDir, "calls.jsonl"), JSON.stringify({ at: Date.now(), ...m }) + "\n")
      const tag = String(m["tag"])
      const ms = Number(m["ms"])
      const deadline = m["deadlineMs"] === undefined ? undefined : Number(m["deadlineMs"])
      const requests = Number(m["requests"])
      calls.calls++
      count(calls.byTag, tag)
      if (deadline !== undefined && ms > deadline + DEADLINE_SLACK_MS) {
        calls.pastDeadline++
        calls.longestOverMs = Math.max(calls.longestOverMs, ms - deadline)
      }
      if (m["replay"] === true) {
        replays.replays++
        count(replays.byTag, tag)
        if (Number(m["sends"]) > 0) {
          replays.sent++
          if (replays.sentExamples.length < 8) replays.sentExamples.push(`${String(m["key"])}: ${tag}, ${Number(m["sends"])} sends of ${requests} requests`)
        }
      }
      if (tag === "ReconcileConflict" && requests === 0) conflictAnswers.set(String(m["key"]), (conflictAnswers.get(String(m["key"])) ?? 0) + 1)
    }
    const startWorker = (slot: Slot) => {
      const child = spawnChild(bundles.path("worker.ts"), env(slot))
      const spawnedAt = Date.now()
      slot.child = child
      slot.pid = child.pid
      if (child.pid !== undefined) slot.owners.push(`w${slot.index + 1}:${child.pid}`)
      child.on("message", (m: Message) => {
        if (m.t === "ready") {
          slot.port = Number(m["port"])
          startMs.push(Date.now() - spawnedAt)
        } else if (m.t === "recovered") for (const k of Object.keys(recovered) as Array<keyof typeof recovered>) recovered[k] += Number(m[k] ?? 0)
        else if (m.t === "call") onCall(m)
        else if (m.t === "transient") count(transient, String(m["tag"]))
        else if (m.t === "job-end" && m["state"] === "unknown" && typeof m["key"] === "string") unknownKeys.add(m["key"])
        else if (m.t === "unexpected" && unexpected.length < 20) unexpected.push(`${String(m["client_orderid"])}: ${String(m["reason"])}`)
        else if (m.t === "dying") slot.armedPoint = `${String(m["point"])}`
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
    cleanup.push(async () => {
      await Promise.all(slots.map((s) => s.db?.close()))
    })
    for (let i = 0; i < options.workers; i++) {
      const slot: Slot = { index: i, child: undefined, port: undefined, pid: undefined, killing: false, armedPoint: undefined, owners: [], db: undefined }
      // Every worker's store reaches the database through its own proxy when stalls are planned.
      if (stallPlan.length > 0) slot.db = await startDbProxy({ host: dbTarget.hostname, port: Number(dbTarget.port || "5432") })
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
    const stall = (s: PlannedStall) => slots[s.worker % slots.length]?.db?.stall(s.durationMs)

    // --- progress: kills, stalls, the simulator's clock, the end ------------------------------------------
    const ended = async () => Number((await db.query("SELECT count(*) AS n FROM fleet_jobs WHERE state <> 'pending'")).rows[0].n)
    const advance = (ms: number) => fetch(`${simUrl}/__sim/clock/advance?ms=${ms}`, { method: "POST" }).then((r) => r.arrayBuffer()).catch(() => undefined)
    // Payments are released to the queue ahead of the next kill by one window of work only, so a
    // fast fleet cannot finish before its kills have happened.
    const window = options.workers * SETTINGS.concurrency + Math.ceil(plan.length / Math.max(1, killPlan.length))
    let released = 0
    let next = 0
    let nextStall = 0
    let finished = 0
    let lastProgress = Date.now()
    let lastLog = 0
    let lastAdvance = Date.now()
    let advancing: Promise<unknown> | undefined
    // The end: every payment finished and every planned kill made (a kill after the last payment
    // still lands among callbacks in flight and the next recover()).
    while (finished < plan.length || next < killPlan.length) {
      await sleep(200)
      const now = Date.now()
      const n = await ended()
      if (n > finished) lastProgress = now
      finished = n
      while (next < killPlan.length && killPlan[next]!.afterPayments <= finished && kill(killPlan[next]!)) next++
      while (nextStall < stallPlan.length && stallPlan[nextStall]!.afterPayments <= finished) stall(stallPlan[nextStall++]!)
      const limit = next < killPlan.length ? Math.min(plan.length, killPlan[next]!.afterPayments + window) : plan.length
      if (limit > released) {
        await releaseJobs(db, limit)
        released = limit
      }
      // Callback retries are due on the simulator's clock (10 s, 20 s, ...): move it along. An
      // advance answers once the deliveries it made are answered, which takes seconds on a loaded
      // machine: it is not awaited here (the kills, stalls and releases must not wait for it), and
      // the next one goes only once it has answered.
      if (now - lastAdvance >= SETTINGS.clockEveryMs && advancing === undefined) {
        lastAdvance = now
        advancing = advance(SETTINGS.clockStepMs).finally(() => {
          advancing = undefined
        })
      }
      if (now - lastLog >= 5_000) {
        lastLog = now
        log(`${finished}/${plan.length} payments ended, ${kills.length} kills, ${Object.values(transient).reduce((a, b) => a + b, 0)} transient failures ridden out`)
      }
      if (now - lastProgress > 120_000) {
        log("no progress for 120 s: auditing what there is")
        break
      }
    }
    // Any kill still armed lands or times out before the flush.
    while (slots.some((s) => s.killing)) await sleep(100)
    while (slots.some((s) => s.port === undefined) && Date.now() - lastProgress < 180_000) await sleep(100)

    await advancing
    log(`all payments ended (${((Date.now() - started) / 1000).toFixed(1)} s); flushing callbacks`)
    // --- flush: every callback delivered, to a calm proxy, with the faults off -------------------------
    // The flush moves the simulator's clock by hours, so it forgets every final order at once: first
    // wait until no unfinished intent is young enough for the workers to believe its order-not-found.
    const bound = notFoundBound(faults)
    if (faults.retentionMs !== undefined && bound !== undefined && bound > 0) {
      const youngest = Number((await db.query("SELECT coalesce(max(created_at), 0) AS t FROM paykit_intents WHERE finished_at IS NULL")).rows[0].t)
      if (youngest + bound > Date.now()) await sleep(youngest + bound - Date.now() + 50)
    }
    proxy.calm()
    for (const s of slots) s.db?.heal()
    if (rules.length > 0) await simFaults({ clear: true })
    const simOrders = async () => {
      sim.send({ t: "orders" })
      const m = await nextMessage(sim, "orders", 60_000)
      return { kept: m["kept"] as SimOrder[], forgotten: m["forgotten"] as SimOrder[] }
    }
    // Each final transaction at the gateway needs its fulfilment: move the simulator's clock until
    // every retry has fallen due and been answered (or the rounds run out and the audit says so).
    // (Captures beside a back-office capture are left out: their callbacks may stay unconfirmed, see audit.ts.)
    const besideOffice = new Set(backOfficePlan.map((b) => b.clientOrderId))
    const outstanding = async () => {
      const { kept, forgotten } = await simOrders()
      let left = 0
      const fulfilled = new Set((await rows<{ k: string }>("SELECT orderid || '|' || tx_index AS k FROM fleet_fulfilments")).map((r) => r.k))
      for (const order of [...kept, ...forgotten]) {
        order.transactions.forEach((t, index) => {
          if (!["sale", "preauth", "capture", "return"].includes(t.type) || t.status === "processing") return
          if (t.type === "capture" && besideOffice.has(order.client_orderid)) return
          if (!fulfilled.has(`${order.orderid}|${index}`)) left++
        })
      }
      return left
    }
    // A killed handler's callback waits for its claim's lease (real time) before anyone may run it.
    const flushUntil = Date.now() + SETTINGS.callbackLeaseMs * 4 + 30_000
    for (let round = 0; Date.now() < flushUntil; round++) {
      await advance(3_600_000)
      await sleep(round === 0 ? 500 : 1_000)
      const left = await outstanding()
      if (left <= 0) break
      if (round % 10 === 0) log(`flush: ${left} transaction outcomes not recorded yet`)
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
    const finalRecover = { claimed: 0, applied: 0, notApplied: 0, unresolved: 0, unknown: 0 }
    for (let round = 0; round < 50; round++) {
      const r = await pay.recover({ olderThanMs: 0, leaseMs: 1, settleMs: settleFor(faults, SETTINGS.timeoutMs), limit: 500, ...(notFoundBound(faults) === undefined ? {} : { notFoundProvesWithinMs: notFoundBound(faults)! }) })
      for (const k of Object.keys(finalRecover) as Array<keyof typeof finalRecover>) finalRecover[k] += r[k]
      if (r.claimed - r.unresolved === 0) break
      await sleep(5)
    }
    log(`final recover(): ${JSON.stringify(finalRecover)}`)
    // Stuck: the protocol never concluded them (an unknown for a person is a conclusion, counted apart).
    const stuck = await rows<{ k: string; attempts: number; created_at: string; sends_end_by: string | null }>(
      "SELECT idempotency_key AS k, attempts, created_at, sends_end_by FROM paykit_intents WHERE finished_at IS NULL ORDER BY created_at"
    )
    const stuckIntents = stuck.length
    for (const i of stuck.slice(0, 8)) findings.push(`${i.k}: intent still unfinished after the final recover() (attempts ${i.attempts}, sends ended ${i.sends_end_by === null ? "?" : Number(i.sends_end_by) - Number(i.created_at)} ms after its creation)`)
    const intentsTakenUpAgain = Number((await db.query("SELECT count(*) AS n FROM paykit_intents WHERE attempts > 1")).rows[0].n)

    // --- conflicts replayed, unknowns left: from the store and from what the workers reported ----------
    const recordedConflicts = new Set((await rows<{ k: string }>(
      "SELECT idempotency_key AS k FROM paykit_intents WHERE outcome_kind = 'Failed' AND outcome_error = 'ReconcileConflict'"
    )).map((r) => r.k))
    let conflictsReplayed = 0
    for (const [key, n] of conflictAnswers) {
      if (recordedConflicts.has(key)) conflictsReplayed += n
      else if (findings.length < 12) findings.push(`${key}: answered ReconcileConflict ${n} × without asking the gateway, but the store records no conflict for it`)
    }
    for (const r of await rows<{ k: string }>(`SELECT idempotency_key AS k FROM paykit_intents WHERE outcome_kind = 'Failed' AND outcome_error IN ('OutcomeUnknown', '${UNPROVEN}')`)) unknownKeys.add(r.k)
    for (const r of await rows<{ k: string | null }>("SELECT final_key AS k FROM fleet_jobs WHERE state = 'unknown'")) if (r.k !== null) unknownKeys.add(r.k)
    // A key a job gave up on may have been settled since (by recover()): only what the store still
    // does not know is left for a person.
    let unknownSettled = 0
    for (const key of unknownKeys) {
      const intent = (await db.query("SELECT outcome_kind, outcome_error FROM paykit_intents WHERE idempotency_key = $1", [key])).rows[0] as Record<string, unknown> | undefined
      const known = intent?.["outcome_kind"] === "Returned" || (intent?.["outcome_kind"] === "Failed" && intent["outcome_error"] !== "OutcomeUnknown" && intent["outcome_error"] !== UNPROVEN)
      if (known) {
        unknownKeys.delete(key)
        unknownSettled++
      }
    }

    // --- the audit ------------------------------------------------------------------------------------
    const { kept, forgotten } = await simOrders()
    const unproven = await rows<{ client_orderid: string }>(`SELECT client_orderid FROM paykit_intents WHERE outcome_kind = 'Failed' AND outcome_error = '${UNPROVEN}'`)
    const everAtGateway = new Set([...kept, ...forgotten].map((o) => o.client_orderid))
    const unknownRecorded = {
      total: unproven.length,
      orderAtGateway: unproven.filter((i) => everAtGateway.has(i.client_orderid)).length,
      neverAtGateway: unproven.filter((i) => !everAtGateway.has(i.client_orderid)).length
    }
    const invariants = (await (await fetch(`${simUrl}/__sim/invariants`)).json()) as unknown[]
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))
    const audit = auditFleet({
      plan,
      orders: [...forgotten, ...kept],
      fulfilments: (await rows<Fulfilment>("SELECT orderid, tx_index, tx_type, status, amount FROM fleet_fulfilments")).map((f) => ({ ...f, tx_index: Number(f.tx_index) })),
      runs: (await rows<CallbackRun>("SELECT orderid, tx_type, tx_index, pid, claimed_at, lease_until, started_at, finished_at, completed_at, effect FROM fleet_runs")).map((r) => ({
        ...r,
        tx_index: Number(r.tx_index),
        claimed_at: num(r.claimed_at),
        lease_until: num(r.lease_until),
        started_at: Number(r.started_at),
        finished_at: num(r.finished_at),
        completed_at: num(r.completed_at)
      })),
      jobs: await rows<JobRow>("SELECT id, state, error, final_key FROM fleet_jobs"),
      backOffice: new Map(backOfficePlan.map((b) => [b.clientOrderId, b.amount]))
    })
    const killsByPoint: Record<string, number> = {}
    for (const k of kills) count(killsByPoint, k.point)
    const report: FleetReport = {
      ...audit,
      payments: plan.length,
      workers: options.workers,
      kills: kills.length,
      stuckIntents,
      conflictsReplayed,
      unknownLeft: unknownKeys.size,
      unknownSettled,
      unknownRecorded,
      conflictsRecorded: recordedConflicts.size,
      intentsTakenUpAgain,
      invariantViolations: invariants.length,
      killsByPoint,
      recovered,
      finalRecover,
      transient,
      unexpected,
      findings,
      workerCrashes,
      proxy: { ...proxy.stats, downBy: { ...proxy.stats.downBy } },
      faults,
      dbStalls: {
        planned: stallPlan.length,
        made: slots.reduce((n, s) => n + (s.db?.stats.stalls ?? 0), 0),
        stalledMs: slots.reduce((n, s) => n + (s.db?.stats.stalledMs ?? 0), 0)
      },
      backOffice,
      forgottenOrders: forgotten.length,
      calls,
      replays,
      elapsedMs: Date.now() - started,
      workerStartMs: { median: [...startMs].sort((a, b) => a - b)[Math.floor(startMs.length / 2)] ?? 0, max: Math.max(0, ...startMs), starts: startMs.length },
      keptIn: keepDir
    }

    // --- the evidence, kept for another tool -----------------------------------------------------------
    if (keepDir !== undefined) {
      await keepSimulator()
      writeFileSync(join(keepDir, "report.json"), JSON.stringify(report, null, 1) + "\n")
      writeFileSync(join(keepDir, "plan.json"), JSON.stringify({ seed: options.seed, payments: plan, kills: killPlan, stalls: stallPlan, backOffice: backOfficePlan }, null, 1) + "\n")
      const database = server === undefined
        ? { kept: "on the given server", server: maskUrl(serverUrl), database: dbName }
        : { kept: "the temporary server's data directory", dataDir: join(keepDir, "pgdata"), database: dbName, version: server.version, user: "postgres" }
      writeFileSync(join(keepDir, "database.json"), JSON.stringify(database, null, 1) + "\n")
      log(`evidence kept in ${keepDir}`)
    }
    return report
  } finally {
    stopping = true
    for (const step of cleanup.reverse()) await step().catch(() => undefined)
    if (keptDatabase && server !== undefined && !existsSync(join(keepDir!, "pgdata"))) log(`the data directory could not be kept in ${keepDir}`)
  }
}

/** The verdict line (docs/decisions.md#25-verdict-lines). */
export function fleetLine(r: FleetReport): string {
  return `fleet: payments ${r.payments}, workers ${r.workers}, kills ${r.kills}, double charges ${r.doubleCharges}, lost outcomes ${r.lostOutcomes}, ` +
    `duplicate fulfilments ${r.duplicateFulfilments}, stuck intents ${r.stuckIntents}, conflicts replayed ${r.conflictsReplayed}, unknown left ${r.unknownLeft}`
}

/**
 * Clean: every count of the line that must be 0 is 0 (conflicts replayed and unknowns left are
 * outcomes a person settles, not failures), and nothing else the audit or the run checks went wrong.
 */
export function fleetClean(r: FleetReport): boolean {
  return r.doubleCharges + r.lostOutcomes + r.duplicateFulfilments + r.stuckIntents + r.amountMismatches + r.invariantViolations + r.failedJobs + r.workerCrashes +
    r.findings.length === 0
}
