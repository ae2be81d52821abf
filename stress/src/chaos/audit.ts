/**
 * The verdict of a chaos run, computed from the simulator's OWN records (`sim.orders()`,
 * `sim.callbackAttempts()`) against what the merchant believes (the ledger: statuses learned and
 * the money it asked to move) and the client's rejections; plus what the invariant checkpoints
 * found during the run. Nothing here trusts the client's view of what happened.
 */
import type { CallbackAttempt, OrderView } from "@paykit/testkit"
import type { Ledger } from "./ledger"
import { auditMoney, type MoneyAudit } from "./books"
import type { UnexpectedError } from "./merchant"
import type { PlannedPayment } from "./plan"

/** Transaction types that move money to the merchant (more than one per order = a double charge). */
const CHARGING = new Set(["sale", "preauth", "capture", "rebill", "payout"])
/** Transaction types whose final status the merchant must learn. */
const TRACKED = new Set(["sale", "preauth", "capture", "return", "rebill", "payout"])
const FINAL = new Set(["approved", "declined", "filtered", "error"])

export interface Audit {
  readonly payments: number
  readonly doubleCharges: number
  readonly doubleRefunds: number
  readonly lostOutcomes: number
  readonly unexpectedErrors: number
  /** Orders whose client_orderid no planned payment used. */
  readonly orphanOrders: number
  readonly ordersInSimulator: number
  readonly transactionsChecked: number
  readonly beliefConflicts: number
  /** Final transactions with a callback URL whose delivery never got a 200. */
  readonly callbacksUndelivered: number
  readonly callbackAttempts: number
  /** Callback attempts by outcome (HTTP status, or the error the simulator logged). */
  readonly callbackOutcomes: Readonly<Record<string, number>>
  readonly lostExamples: ReadonlyArray<string>
  readonly unexpectedExamples: ReadonlyArray<UnexpectedError>
  /** Orders (and currency totals) whose money differs between the merchant's books and the simulator's ledger. */
  readonly amountMismatches: number
  readonly money: MoneyAudit
  /** Distinct (order, invariant) pairs found broken at any checkpoint of the run. */
  readonly invariantViolations: number
  readonly invariantCheckpoints: number
  readonly invariantExamples: ReadonlyArray<string>
}

/** What the run's invariant checkpoints found (see ./watch.ts). */
export interface InvariantFindings {
  readonly violations: number
  readonly checkpoints: number
  examples(): string[]
}

export function audit(plan: ReadonlyArray<PlannedPayment>, orders: ReadonlyArray<OrderView>, attempts: ReadonlyArray<CallbackAttempt>, ledger: Ledger, unexpected: ReadonlyArray<UnexpectedError>, invariants?: InvariantFindings): Audit {
  const byClient = new Map<string, OrderView[]>()
  for (const order of orders) {
    const list = byClient.get(order.client_orderid)
    if (list === undefined) byClient.set(order.client_orderid, [order])
    else list.push(order)
  }
  let doubleCharges = 0
  let doubleRefunds = 0
  for (const list of byClient.values()) {
    if (list.length > 1) doubleCharges++
    for (const order of list) {
      const counts = new Map<string, number>()
      for (const tx of order.transactions) counts.set(tx.type, (counts.get(tx.type) ?? 0) + 1)
      if ([...counts].some(([type, n]) => CHARGING.has(type) && n > 1)) doubleCharges++
      if ((counts.get("return") ?? 0) > 1) doubleRefunds++
    }
  }

  const planned = new Set<string>()
  let lostOutcomes = 0
  let transactionsChecked = 0
  const lostExamples: string[] = []
  const lose = (what: string) => {
    lostOutcomes++
    if (lostExamples.length < 10) lostExamples.push(what)
  }
  for (const p of plan) {
    const ids = p.rebillClientOrderId === undefined ? [p.clientOrderId] : [p.clientOrderId, p.rebillClientOrderId]
    for (const id of ids) {
      planned.add(id)
      const order = byClient.get(id)?.[0]
      if (order === undefined) {
        // The merchant's payment never reached the gateway: lost unless the merchant knows it failed.
        if (ledger.belief(id, "sale") !== undefined || ledger.belief(id, "rebill") !== undefined) lose(`${id}: believed but absent`)
        else lose(`${id}: no order`)
        continue
      }
      for (const tx of order.transactions) {
        if (!TRACKED.has(tx.type)) continue
        transactionsChecked++
        const belief = ledger.belief(id, tx.type)
        if (!FINAL.has(tx.status)) lose(`${id}/${tx.type}: still ${tx.status}`)
        else if (belief === undefined) lose(`${id}/${tx.type}: never learned (${tx.status})`)
        else if (belief !== tx.status) lose(`${id}/${tx.type}: believed ${belief}, simulator ${tx.status}`)
      }
    }
  }
  const orphanOrders = [...byClient.keys()].filter((id) => !planned.has(id)).length

  // Each delivery chain ends at its first 200, so an order needs one 200 per final transaction.
  const ok = new Map<string, number>()
  for (const a of attempts) if (a.outcome === 200) ok.set(a.orderid, (ok.get(a.orderid) ?? 0) + 1)
  let callbacksUndelivered = 0
  for (const order of orders) {
    const finals = order.transactions.filter((tx) => FINAL.has(tx.status) && tx.type !== "payout-check").length
    callbacksUndelivered += Math.max(0, finals - (ok.get(order.orderid) ?? 0))
  }

  const callbackOutcomes: Record<string, number> = {}
  for (const a of attempts) {
    const key = a.outcome === "error" ? `error: ${a.error ?? "?"}` : String(a.outcome)
    callbackOutcomes[key] = (callbackOutcomes[key] ?? 0) + 1
  }

  const money = auditMoney(orders, ledger)
  return {
    payments: plan.length,
    doubleCharges,
    doubleRefunds,
    lostOutcomes,
    unexpectedErrors: unexpected.length,
    orphanOrders,
    ordersInSimulator: orders.length,
    transactionsChecked,
    beliefConflicts: ledger.conflicts,
    callbacksUndelivered,
    callbackAttempts: attempts.length,
    callbackOutcomes,
    lostExamples,
    unexpectedExamples: unexpected.slice(0, 10),
    amountMismatches: money.amountMismatches,
    money,
    invariantViolations: invariants?.violations ?? 0,
    invariantCheckpoints: invariants?.checkpoints ?? 0,
    invariantExamples: invariants?.examples() ?? []
  }
}
