/**
 * The fleet's verdict, from the simulator's own ledger (`/__sim/orders`, `/__sim/invariants`) against
 * what the merchant's tables say, never from what a worker believed:
 *
 * - double charges: a payment with more than one order, an order with more than one sale, preauth,
 *   capture or return, or an order nobody planned;
 * - lost outcomes: a planned payment without an order or whose job never finished, and every final
 *   transaction whose outcome the merchant never recorded (no fulfilment with the same status), or
 *   that is not final at all;
 * - duplicate fulfilments: an `onCallback` run for a transaction after an earlier run whose callback
 *   was marked done (its handler answered 200). A re-run after a run that never completed (killed
 *   mid-handler, or before the store marked it done) is the documented re-run after a crash, which
 *   the unique key absorbs, and is reported apart;
 * - stuck intents: intents still unfinished after the final `recover()` (counted by the run).
 */
import type { PlannedPayment } from "./plan"

export interface SimTransaction {
  readonly type: string
  readonly status: string
  readonly amount?: string
}
export interface SimOrder {
  readonly orderid: string
  readonly client_orderid: string
  readonly transactions: ReadonlyArray<SimTransaction>
}
export interface Fulfilment {
  readonly orderid: string
  readonly tx_type: string
  readonly status: string
  readonly amount: string
}
export interface CallbackRun {
  readonly orderid: string
  readonly tx_type: string
  readonly pid: number
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
}
export interface Audit {
  readonly doubleCharges: number
  readonly lostOutcomes: number
  readonly duplicateFulfilments: number
  readonly amountMismatches: number
  readonly orphanOrders: number
  readonly failedJobs: number
  readonly callbackRuns: number
  /** Re-runs of a handler whose earlier run died with its process (or failed): absorbed by the unique key. */
  readonly reRunsAfterCrash: number
  readonly examples: ReadonlyArray<string>
}

const TRACKED = new Set(["sale", "preauth", "capture", "return"])
const FINAL = new Set(["approved", "declined", "filtered", "error"])
const callbackType = (txType: string) => (txType === "return" ? "reversal" : txType)
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
}): Audit {
  const examples: string[] = []
  const note = (line: string) => {
    if (examples.length < 12) examples.push(line)
  }
  const byClient = new Map<string, SimOrder[]>()
  for (const o of input.orders) byClient.set(o.client_orderid, [...(byClient.get(o.client_orderid) ?? []), o])
  const fulfilled = new Map(input.fulfilments.map((f) => [`${f.orderid}|${f.tx_type}`, f]))
  const jobs = new Map(input.jobs.map((j) => [j.id, j]))
  const planned = new Set(input.plan.map((p) => p.clientOrderId))

  let doubleCharges = 0
  let lostOutcomes = 0
  let amountMismatches = 0
  for (const p of input.plan) {
    const job = jobs.get(p.index)
    if (job === undefined || job.state !== "done") {
      lostOutcomes++
      note(`${p.clientOrderId}: job ${job?.state ?? "missing"}${job?.error ? ` (${job.error})` : ""}`)
    }
    const orders = byClient.get(p.clientOrderId) ?? []
    if (orders.length === 0) {
      lostOutcomes++
      note(`${p.clientOrderId}: no order at the gateway`)
      continue
    }
    if (orders.length > 1) {
      doubleCharges += orders.length - 1
      note(`${p.clientOrderId}: ${orders.length} orders`)
    }
    for (const order of orders) {
      const counts = new Map<string, number>()
      for (const tx of order.transactions) {
        if (!TRACKED.has(tx.type)) continue
        counts.set(tx.type, (counts.get(tx.type) ?? 0) + 1)
        const wanted = tx.type === "capture" || tx.type === "return" ? p.followAmount : p.amount
        if (milli(tx.amount) !== undefined && milli(tx.amount) !== milli(wanted)) {
          amountMismatches++
          note(`${p.clientOrderId}/${tx.type}: ${tx.amount} at the gateway, ${wanted} planned`)
        }
        const f = fulfilled.get(`${order.orderid}|${callbackType(tx.type)}`)
        if (!FINAL.has(tx.status)) {
          lostOutcomes++
          note(`${p.clientOrderId}/${tx.type}: still ${tx.status}`)
        } else if (f === undefined || f.status !== tx.status) {
          lostOutcomes++
          note(`${p.clientOrderId}/${tx.type}: ${tx.status} at the gateway, ${f === undefined ? "never recorded" : `recorded ${f.status}`}`)
        }
      }
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
  for (const r of input.runs) byKey.set(`${r.orderid}|${r.tx_type}`, [...(byKey.get(`${r.orderid}|${r.tx_type}`) ?? []), r])
  let duplicateFulfilments = 0
  let reRunsAfterCrash = 0
  for (const [key, runs] of byKey) {
    runs.sort((a, b) => a.started_at - b.started_at)
    runs.forEach((run, i) => {
      if (i === 0) return
      // An earlier run whose callback was never marked done (its process was killed, its handler
      // failed, or the store could not record completion): this run is the re-run its lease exists
      // for. After a completed run, a second run is a duplicate: the exactly-once did not hold.
      if (runs.slice(0, i).every((earlier) => earlier.completed_at === null)) reRunsAfterCrash++
      else {
        duplicateFulfilments++
        note(`${key}: onCallback ran again (pid ${run.pid}) after a run that completed`)
      }
    })
  }

  return {
    doubleCharges,
    lostOutcomes,
    duplicateFulfilments,
    amountMismatches,
    orphanOrders: orphans.length,
    failedJobs: input.jobs.filter((j) => j.state === "failed").length,
    callbackRuns: input.runs.length,
    reRunsAfterCrash,
    examples
  }
}
