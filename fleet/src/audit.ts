/**
 * The fleet's verdict, from the simulator's own ledger (its orders, those it forgot included) against
 * what the merchant's tables say, never from what a worker believed:
 *
 * - double charges: a payment with more than one order, an order with more than one sale or
 *   preauth, more than one capture or return made by the merchant (a back-office capture, told by
 *   its planned amount, is not the merchant's), more than one capture of the back office's amount,
 *   or an order nobody planned;
 * - lost outcomes: a planned payment without an order or whose job never ended (`done`, or a
 *   `conflict`, `unknown` or `forgotten` the job reported), and every final transaction whose outcome
 *   the merchant never recorded (no fulfilment of that transaction with the same status), or that is
 *   not final at all. A payment without an order whose job ended `unknown` on its opening call (the
 *   sale or preauth) is not lost: the merchant holds it as unknown for a person, and the gateway
 *   shows nothing moved; it is counted apart (`unknownNeverMade`, and in the run's `unknown left`). A capture beside a back-office capture whose callback was never recorded is
 *   counted apart (`unprovenBesideBackOffice`): the handler proves such a capture from the order's
 *   totals only while it is the order's last transaction, by design;
 * - duplicate fulfilments: an `onCallback` run for a transaction after an earlier run whose callback
 *   was marked done (its handler answered 200), or that began while an earlier run still held the
 *   claim's lease (the lease the store granted that run, as its worker recorded it): two live runs of
 *   one effect, whatever became of the first. A re-run after a run that never completed and whose
 *   lease had run out (killed mid-handler, or before the store marked it done) is the documented
 *   re-run after a crash, which the unique key absorbs, and is reported apart;
 * - stuck intents: intents still unfinished after the final `recover()` (counted by the run).
 */
import type { PlannedPayment } from "./plan"

export interface SimTransaction {
  readonly type: string
  readonly status: string
  readonly amount?: string
  readonly serialNumber?: string
}
export interface SimOrder {
  readonly orderid: string
  readonly client_orderid: string
  readonly transactions: ReadonlyArray<SimTransaction>
}
export interface Fulfilment {
  readonly orderid: string
  /** The transaction's index in its order (the callback's `processor-rrn`). */
  readonly tx_index: number
  readonly tx_type: string
  readonly status: string
  readonly amount: string
}
export interface CallbackRun {
  readonly orderid: string
  readonly tx_type: string
  readonly tx_index: number
  readonly pid: number
  /** When the store granted the claim this run ran under, and until when it held (null: not recorded). */
  readonly claimed_at: number | null
  readonly lease_until: number | null
  readonly started_at: number
  readonly finished_at: number | null
  /** When the handler answered 200 after this run (the store marked the callback done). */
  readonly completed_at: number | null
  readonly effect: string | null
}
export interface JobRow {
  readonly id: number
  readonly state: string
  readonly error: string | null
  readonly final_key?: string | null
}
export interface Audit {
  readonly doubleCharges: number
  readonly lostOutcomes: number
  readonly duplicateFulfilments: number
  readonly amountMismatches: number
  readonly orphanOrders: number
  readonly failedJobs: number
  readonly callbackRuns: number
  /** Re-runs of a handler whose earlier run died with its process (or failed) after its lease: absorbed by the unique key. */
  readonly reRunsAfterCrash: number
  /** Runs that began while an earlier run of the same transaction held the claim's lease (counted in duplicateFulfilments too). */
  readonly reRunsUnderLease: number
  /** Captures the back office made (by amount) that the gateway approved. */
  readonly backOfficeCaptures: number
  /**
   * Captures on an order with a back-office capture whose callback the merchant never recorded: the
   * handler cannot prove a second capture without a serial number once another is the order's last
   * transaction (it answers "unconfirmed" and the gateway retries), so these are not lost outcomes.
   */
  readonly unprovenBesideBackOffice: number
  /**
   * Payments without an order at the gateway whose job ended `unknown` on its opening call: nothing
   * moved, and the merchant left the key for a person (not lost outcomes; in `unknown left`).
   */
  readonly unknownNeverMade: number
  /** Jobs that ended as `conflict`, `unknown`, `forgotten`. */
  readonly jobsConflict: number
  readonly jobsUnknown: number
  readonly jobsForgotten: number
  readonly examples: ReadonlyArray<string>
}

/** How a job may end without a lost outcome. */
const ENDED = new Set(["done", "conflict", "unknown", "forgotten"])

const TRACKED = new Set(["sale", "preauth", "capture", "return"])
const FINAL = new Set(["approved", "declined", "filtered", "error"])
const milli = (amount: string | undefined): bigint | undefined => {
  const m = amount === undefined ? null : /^(\d+)(?:\.(\d{1,3}))?$/.exec(amount)
  return m === null ? undefined : BigInt(m[1]!) * 1000n + BigInt((m[2] ?? "").padEnd(3, "0"))
}

export function auditFleet(input: {
  readonly plan: ReadonlyArray<PlannedPayment>
  readonly orders: ReadonlyArray<SimOrder>
  readonly fulfilments: ReadonlyArray<Fulfilment>
  readonly runs: ReadonlyArray<CallbackRun>
  readonly jobs: ReadonlyArray<JobRow>
  /** The back office's capture amount by `client_orderid` (its planned captures). */
  readonly backOffice?: ReadonlyMap<string, string> | undefined
}): Audit {
  const examples: string[] = []
  const note = (line: string) => {
    if (examples.length < 12) examples.push(line)
  }
  const byClient = new Map<string, SimOrder[]>()
  for (const o of input.orders) byClient.set(o.client_orderid, [...(byClient.get(o.client_orderid) ?? []), o])
  const fulfilled = new Map(input.fulfilments.map((f) => [`${f.orderid}|${f.tx_index}`, f]))
  const jobs = new Map(input.jobs.map((j) => [j.id, j]))
  const planned = new Set(input.plan.map((p) => p.clientOrderId))
  const backOffice = input.backOffice ?? new Map<string, string>()

  let doubleCharges = 0
  let lostOutcomes = 0
  let amountMismatches = 0
  let backOfficeCaptures = 0
  let unprovenBesideBackOffice = 0
  let unknownNeverMade = 0
  for (const p of input.plan) {
    const job = jobs.get(p.index)
    if (job === undefined || !ENDED.has(job.state)) {
      lostOutcomes++
      note(`${p.clientOrderId}: job ${job?.state ?? "missing"}${job?.error ? ` (${job.error})` : ""}`)
    }
    const orders = byClient.get(p.clientOrderId) ?? []
    if (orders.length === 0 && job?.state === "unknown" && (job.final_key === `${p.clientOrderId}:sale` || job.final_key === `${p.clientOrderId}:preauth`)) {
      unknownNeverMade++
      continue
    }
    if (orders.length === 0) {
      lostOutcomes++
      note(`${p.clientOrderId}: no order at the gateway`)
      continue
    }
    if (orders.length > 1) {
      doubleCharges += orders.length - 1
      note(`${p.clientOrderId}: ${orders.length} orders`)
    }
    const officeAmount = milli(backOffice.get(p.clientOrderId))
    for (const order of orders) {
      const counts = new Map<string, number>()
      order.transactions.forEach((tx, index) => {
        if (!TRACKED.has(tx.type)) return
        // The back office's capture: its own amount, planned never to equal the merchant's.
        const office = tx.type === "capture" && officeAmount !== undefined && milli(tx.amount) === officeAmount
        const kind = office ? "back-office capture" : tx.type
        counts.set(kind, (counts.get(kind) ?? 0) + 1)
        if (office) {
          if (tx.status === "approved") backOfficeCaptures++
        } else {
          const wanted = tx.type === "capture" || tx.type === "return" ? p.followAmount : p.amount
          if (milli(tx.amount) !== undefined && milli(tx.amount) !== milli(wanted)) {
            amountMismatches++
            note(`${p.clientOrderId}/${tx.type}: ${tx.amount} at the gateway, ${wanted} planned`)
          }
        }
        const f = fulfilled.get(`${order.orderid}|${index}`)
        if (!FINAL.has(tx.status)) {
          lostOutcomes++
          note(`${p.clientOrderId}/${kind}: still ${tx.status}`)
        } else if (f === undefined && tx.type === "capture" && officeAmount !== undefined) {
          // Beside a back-office capture, the callback handler proves a capture no serial number of
          // the fleet names from the order's totals only while it is the order's last transaction
          // (docs/fleet.md, callbacks; packages/client callbacks/transactions.ts): a capture callback
          // delivered after the other capture stays unconfirmed, and the merchant reads `status`.
          unprovenBesideBackOffice++
        } else if (f === undefined || f.status !== tx.status) {
          lostOutcomes++
          note(`${p.clientOrderId}/${kind}: ${tx.status} at the gateway, ${f === undefined ? "never recorded" : `recorded ${f.status}`}`)
        }
      })
      for (const [type, n] of counts) {
        if (n > 1) {
          doubleCharges += n - 1
          note(`${p.clientOrderId}: ${n} × ${type}`)
        }
      }
    }
  }
  const orphans = [...byClient.keys()].filter((id) => !planned.has(id))
  doubleCharges += orphans.length
  for (const id of orphans.slice(0, 3)) note(`${id}: an order nobody planned`)

  const byKey = new Map<string, CallbackRun[]>()
  for (const r of input.runs) byKey.set(`${r.orderid}|${r.tx_index}`, [...(byKey.get(`${r.orderid}|${r.tx_index}`) ?? []), r])
  let duplicateFulfilments = 0
  let reRunsAfterCrash = 0
  let reRunsUnderLease = 0
  for (const [key, runs] of byKey) {
    runs.sort((a, b) => a.started_at - b.started_at)
    runs.forEach((run, i) => {
      if (i === 0) return
      const earlier = runs.slice(0, i)
      // After a completed run, a second run is a duplicate: the exactly-once did not hold.
      if (earlier.some((e) => e.completed_at !== null)) {
        duplicateFulfilments++
        note(`${key} (${run.tx_type}): onCallback ran again (pid ${run.pid}) after a run that completed`)
        return
      }
      // An earlier run that still held its lease when this one began: two live claims of one
      // callback (the claims were not shared, or a lease was granted twice), not a crash's re-run.
      const live = earlier.find((e) => e.lease_until !== null && e.lease_until > run.started_at)
      if (live !== undefined) {
        duplicateFulfilments++
        reRunsUnderLease++
        note(`${key} (${run.tx_type}): onCallback ran again (pid ${run.pid}) ${live.lease_until! - run.started_at} ms before the lease of the run of pid ${live.pid} ran out`)
        return
      }
      // Every earlier run died or failed and its lease had run out: the re-run its lease exists for.
      reRunsAfterCrash++
    })
  }

  const jobsIn = (state: string) => input.jobs.filter((j) => j.state === state).length
  return {
    doubleCharges,
    lostOutcomes,
    duplicateFulfilments,
    amountMismatches,
    orphanOrders: orphans.length,
    failedJobs: jobsIn("failed"),
    callbackRuns: input.runs.length,
    reRunsAfterCrash,
    reRunsUnderLease,
    backOfficeCaptures,
    unprovenBesideBackOffice,
    unknownNeverMade,
    jobsConflict: jobsIn("conflict"),
    jobsUnknown: jobsIn("unknown"),
    jobsForgotten: jobsIn("forgotten"),
    examples
  }
}
