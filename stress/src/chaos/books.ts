/**
 * Money, per order and in total: what the merchant believes was authorised, charged, refunded and
 * paid out (its intents — what it asked to move — that it learned were approved) against the
 * simulator's ledger on each order view. The merchant never voids, releases a hold or sees a
 * chargeback in this run, so those buckets must stay 0, and after the flush nothing is in flight.
 */
import type { OrderView } from "@paykit/testkit"
import type { Ledger } from "./ledger"
import { milli, showMilli } from "./money"

const BUCKETS = ["authorized", "captured", "returned", "paidOut", "holdReleased", "voided", "chargedBack", "inFlight"] as const
type Bucket = (typeof BUCKETS)[number]
type Money = Record<Bucket, bigint>

const zero = (): Money => ({ authorized: 0n, captured: 0n, returned: 0n, paidOut: 0n, holdReleased: 0n, voided: 0n, chargedBack: 0n, inFlight: 0n })

export interface MoneyAudit {
  /** Orders whose money differs between the merchant's books and the simulator's ledger, plus currency totals that differ. */
  readonly amountMismatches: number
  readonly ordersMismatched: number
  readonly totalsMismatched: number
  readonly ordersCompared: number
  /** Per currency: the merchant's and the simulator's totals (major units, thousandths). */
  readonly totals: Readonly<Record<string, { merchant: Record<string, string>; simulator: Record<string, string> }>>
  readonly examples: ReadonlyArray<string>
}

/** The merchant's books: per client_orderid, its currency and the money it believes moved. */
export function merchantBooks(ledger: Ledger): Map<string, { currency: string; money: Money }> {
  const books = new Map<string, { currency: string; money: Money }>()
  for (const intent of ledger.allIntents()) {
    let book = books.get(intent.clientOrderId)
    if (book === undefined) books.set(intent.clientOrderId, (book = { currency: intent.currency, money: zero() }))
    if (ledger.belief(intent.clientOrderId, intent.type) !== "approved") continue
    const amount = milli(intent.amount)
    const m = book.money
    switch (intent.type) {
      case "sale":
      case "rebill":
        m.authorized += amount
        m.captured += amount
        break
      case "preauth":
        m.authorized += amount
        break
      case "capture":
        m.captured += amount
        break
      case "return":
        m.returned += amount
        break
      case "payout":
        m.paidOut += amount
        break
    }
  }
  return books
}

/** The simulator's ledger per client_orderid (summed over its orders: a second order is money too). */
function simulatorBooks(orders: ReadonlyArray<OrderView>): Map<string, { currency: string; money: Money }> {
  const books = new Map<string, { currency: string; money: Money }>()
  for (const order of orders) {
    let book = books.get(order.client_orderid)
    if (book === undefined) books.set(order.client_orderid, (book = { currency: order.currency, money: zero() }))
    for (const bucket of BUCKETS) book.money[bucket] += milli(order[bucket], `${order.orderid} ${bucket}`)
  }
  return books
}

export function auditMoney(orders: ReadonlyArray<OrderView>, ledger: Ledger): MoneyAudit {
  const merchant = merchantBooks(ledger)
  const simulator = simulatorBooks(orders)
  const examples: string[] = []
  let ordersMismatched = 0
  const totals = new Map<string, { merchant: Money; simulator: Money }>()
  const total = (currency: string) => {
    let t = totals.get(currency)
    if (t === undefined) totals.set(currency, (t = { merchant: zero(), simulator: zero() }))
    return t
  }
  const ids = new Set([...merchant.keys(), ...simulator.keys()])
  for (const id of ids) {
    const m = merchant.get(id)
    const s = simulator.get(id)
    const currency = m?.currency ?? s!.currency
    const mine = m?.money ?? zero()
    const theirs = s?.money ?? zero()
    const t = total(currency)
    const differ: string[] = []
    for (const bucket of BUCKETS) {
      t.merchant[bucket] += mine[bucket]
      t.simulator[bucket] += theirs[bucket]
      if (mine[bucket] !== theirs[bucket]) differ.push(`${bucket} merchant ${showMilli(mine[bucket])}, simulator ${showMilli(theirs[bucket])}`)
    }
    if (differ.length > 0) {
      ordersMismatched++
      if (examples.length < 10) examples.push(`${id} (${currency}): ${differ.join("; ")}`)
    }
  }
  let totalsMismatched = 0
  const shown: Record<string, { merchant: Record<string, string>; simulator: Record<string, string> }> = {}
  for (const [currency, t] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    for (const bucket of BUCKETS) {
      if (t.merchant[bucket] !== t.simulator[bucket]) {
        totalsMismatched++
        if (examples.length < 12) examples.push(`total ${currency} ${bucket}: merchant ${showMilli(t.merchant[bucket])}, simulator ${showMilli(t.simulator[bucket])}`)
      }
    }
    const show = (money: Money) => Object.fromEntries(BUCKETS.filter((b) => money[b] !== 0n).map((b) => [b, showMilli(money[b])]))
    shown[currency] = { merchant: show(t.merchant), simulator: show(t.simulator) }
  }
  return { amountMismatches: ordersMismatched + totalsMismatched, ordersMismatched, totalsMismatched, ordersCompared: ids.size, totals: shown, examples }
}
