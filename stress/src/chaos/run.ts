/**
 * One chaos run: the simulator over loopback HTTP on the real clock, faults injected at random,
 * a misbehaving callback front, a simulator restart mid-run, and N payments of mixed flows through
 * `createPayClient` (default global fetch). Returns the audit computed from the simulator's records.
 *
 * Restart (a real one): halfway through, `sim.snapshot()` is taken and the simulator is closed in
 * the same tick (listener, open connections and the instance: it changes no state from then on), a
 * NEW simulator is created with `createSimulator({ restore: snapshot })` and listens on the SAME
 * port, while traffic is in flight; requests in that gap see resets or ECONNREFUSED and the merchant
 * must ride them out. The fault rules are not state, so they are added to the new instance again.
 * The verdict reads the instance alive at the end, which holds the restored state.
 */
import { monitorEventLoopDelay } from "node:perf_hooks"
import { createPayClient } from "@paykit/client"
import { createSimulator, testMerchant, type Simulator, type SimulatorOptions } from "@paykit/testkit"
import { createRng } from "../rng"
import { audit, type Audit } from "./audit"
import { startCallbackFront } from "./callback-front"
import { Ledger } from "./ledger"
import { runPayment, type MerchantContext } from "./merchant"
import { planPayments } from "./plan"
import { countTraffic } from "./traffic"
import { InvariantWatch } from "./watch"

export interface ChaosOptions {
  readonly payments: number
  readonly concurrency: number
  readonly seed: number
  /** Progress lines (never secrets); default silent. */
  readonly log?: (line: string) => void
}

export interface ChaosReport extends Audit {
  readonly seed: number
  readonly concurrency: number
  readonly elapsedMs: number
  readonly restartMs: number
  /**
   * What the restart carried over: orders, pending jobs (of which callback attempts, and of those
   * the ones under way at snapshot time, due at its very time: the old instance may have delivered
   * them unlogged, the new one delivers them again), live nonces, and the snapshot's JSON size.
   */
  readonly restart: {
    readonly orders: number
    readonly pendingJobs: number
    readonly callbackJobs: number
    readonly callbacksInFlight: number
    readonly nonces: number
    readonly snapshotBytes: number
  }
  readonly requestsFaulted: string
  readonly transient: Readonly<Record<string, number>>
  readonly paths: Readonly<Record<string, number>>
  /** Fault-matrix cases met (`operation × fault × reaction` → count); the verdict line counts them. */
  readonly cases: Readonly<Record<string, number>>
  readonly learnedBy: Readonly<Record<string, number>>
  readonly front: Readonly<Record<string, number>>
  /** Client → simulator replies by HTTP status, and failures by code, as undici saw them. */
  readonly wire: { readonly byStatus: Readonly<Record<string, number>>; readonly errors: Readonly<Record<string, number>> }
}

/** Fault mix per API request (the simulator rolls its own dice with Math.random). */
const FAULTS = [
  { kind: "reset-before", probability: 0.02 },
  { kind: "reset-after", probability: 0.02 },
  { kind: "http-500", probability: 0.02 },
  { kind: "latency", probability: 0.03, latencyMs: 150 },
  // Longer than the client's per-attempt timeout: a Timeout while the request is still processed.
  { kind: "latency", probability: 0.002, latencyMs: 2_500 },
  { kind: "callback-fail", probability: 0.03 }
] as const

const CLIENT_TIMEOUT_MS = 2_000
const HOUR = 3_600_000

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined)
  const started = Date.now()
  const plan = planPayments(options.payments, options.seed)
  const loopDelay = monitorEventLoopDelay({ resolution: 20 })
  loopDelay.enable()
  const simOptions: SimulatorOptions = { clock: "real", processingDelayMs: 20 }
  let sim: Simulator = createSimulator(simOptions)
  let server = await sim.listen({ port: 0, host: "127.0.0.1" })
  const port = Number(new URL(server.url).port)
  const traffic = countTraffic(new URL(server.url).origin)
  const ledger = new Ledger()
  const pay = createPayClient({
    baseUrl: server.url,
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    privateKeyPem: testMerchant.privateKeyPem,
    endpointId: testMerchant.endpointId,
    timeoutMs: CLIENT_TIMEOUT_MS,
    retry: { maxRetries: 3, baseDelayMs: 25, maxDelayMs: 400 },
    poll: { fastIntervalMs: 40, fastPhaseMs: 60_000, slowIntervalMs: 500, deadlineMs: 60_000 }
  })
  const handler = pay.callbackHandler({
    onCallback: (cb) => ledger.learn(cb.client_orderid, cb.type, cb.status, "callback")
  })
  const front = await startCallbackFront({
    rng: createRng(options.seed ^ 0x5bd1e995),
    handler,
    lost: 0.05,
    duplicated: 0.05,
    heldBack: 0.1,
    maxHoldMs: 1_500
  })
  const ctx: MerchantContext = { pay, ledger, callbackUrl: front.url, unexpected: [], known: [], transient: {}, paths: {}, cases: {} }
  for (const rule of FAULTS) sim.faults.add({ ...rule })
  const watch = new InvariantWatch()

  let restartMs = 0
  let restartInfo = { orders: 0, pendingJobs: 0, callbackJobs: 0, callbacksInFlight: 0, nonces: 0, snapshotBytes: 0 }
  let oldClosed: Promise<void> = Promise.resolve()
  const restartAt = Math.floor(options.payments / 2)
  const restart = async () => {
    const t0 = Date.now()
    const old = sim
    // Snapshot and close in one tick: nothing can change the old state in between, and from here
    // on the old instance drops every request (its listener and open connections are closed).
    watch.check(old, "before the restart")
    const snapshot = old.snapshot()
    oldClosed = old.close()
    // Through JSON, as a process restart (paykit-sim --state) would do it.
    const text = JSON.stringify(snapshot)
    const callbackJobs = snapshot.pendingJobs.filter((job) => job.kind === "callback")
    restartInfo = {
      orders: snapshot.orders.length,
      pendingJobs: snapshot.pendingJobs.length,
      callbackJobs: callbackJobs.length,
      callbacksInFlight: callbackJobs.filter((job) => job.at === snapshot.clock.now).length,
      nonces: snapshot.nonces.length,
      snapshotBytes: text.length
    }
    const fresh = createSimulator({ ...simOptions, restore: JSON.parse(text) })
    watch.check(fresh, "after the restart")
    for (const rule of FAULTS) fresh.faults.add({ ...rule })
    for (let attempt = 0; ; attempt++) {
      try {
        server = await fresh.listen({ port, host: "127.0.0.1" })
        break
      } catch (error) {
        // The old listener may still be releasing the port.
        if (attempt >= 100) throw error
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
    sim = fresh
    restartMs = Date.now() - t0
    log(`simulator restarted from a snapshot (${restartInfo.orders} orders, ${restartInfo.pendingJobs} pending jobs of which ${restartInfo.callbackJobs} callbacks (${restartInfo.callbacksInFlight} under way), ${restartInfo.nonces} nonces, ${restartInfo.snapshotBytes} bytes) on port ${port} in ${restartMs} ms`)
  }

  let next = 0
  let done = 0
  let restarting: Promise<void> | undefined
  const step = Math.max(1, Math.floor(options.payments / 10))
  // Invariant checkpoints while traffic runs (the simulator also records any break between them).
  const checkEvery = Math.max(1, Math.floor(options.payments / 20))
  const worker = async () => {
    while (next < plan.length) {
      const payment = plan[next++]!
      if (payment.index === restartAt) restarting = restart()
      await runPayment(ctx, payment)
      done++
      if (done % checkEvery === 0) watch.check(sim, `after ${done} payments`)
      if (done % step === 0) log(`${done}/${plan.length} payments, ${ctx.unexpected.length} unexpected errors`)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker))
  await restarting
  await oldClosed

  // Flush: no more faults; move the simulator clock so every callback retry falls due.
  const attemptsBeforeFlush = sim.callbackAttempts().length
  loopDelay.disable()
  log(`event loop delay during the run: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(0)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`)
  const flushStart = Date.now()
  sim.faults.clear()
  front.calm()
  for (let round = 0; round < 4; round++) {
    await sim.clock.advance(3 * HOUR)
    if (audit(plan, sim.orders(), sim.callbackAttempts(), ledger, ctx.unexpected).callbacksUndelivered === 0) break
  }
  watch.check(sim, "at the end")
  const verdict = audit(plan, sim.orders(), sim.callbackAttempts(), ledger, ctx.unexpected, watch)
  log(`flush: ${attemptsBeforeFlush} callback attempts before, ${verdict.callbackAttempts - attemptsBeforeFlush} during the flush (${Date.now() - flushStart} ms)`)
  traffic.stop()
  await front.close()
  await sim.close()
  return {
    ...verdict,
    seed: options.seed,
    concurrency: options.concurrency,
    elapsedMs: Date.now() - started,
    restartMs,
    restart: restartInfo,
    requestsFaulted: FAULTS.map((f) => `${f.kind}${"latencyMs" in f ? `(${f.latencyMs}ms)` : ""}@${f.probability}`).join(" "),
    transient: ctx.transient,
    paths: ctx.paths,
    cases: ctx.cases,
    learnedBy: ledger.learnedBy,
    front: { ...front.stats },
    wire: { byStatus: traffic.byStatus, errors: traffic.errors }
  }
}

/**
 * The run's one verdict line (docs/decisions.md#25-verdict-lines); with the run's fault-matrix cases it also says
 * how many it met and of how many kinds (`operation × fault × reaction`): the counts before them hold
 * for every one of those cases.
 */
export function chaosLine(r: Audit & { readonly cases?: Readonly<Record<string, number>> }): string {
  const line = `payments ${r.payments}, double charges ${r.doubleCharges}, lost outcomes ${r.lostOutcomes}, unexpected errors ${r.unexpectedErrors}, amount mismatches ${r.amountMismatches}, invariant violations ${r.invariantViolations}`
  if (r.cases === undefined) return line
  const counts = Object.values(r.cases)
  return `${line}, fault cases ${counts.reduce((a, b) => a + b, 0)} of ${counts.length} kinds`
}

/** Whether the verdict is clean: every count of the line (and the audit's other failure counts) is 0. */
export function chaosClean(r: Audit): boolean {
  return r.doubleCharges + r.doubleRefunds + r.lostOutcomes + r.unexpectedErrors + r.beliefConflicts + r.amountMismatches + r.invariantViolations === 0
}
