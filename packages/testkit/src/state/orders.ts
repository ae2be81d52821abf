/**
 * The order store. An order (`orderid`) carries a sequence of transactions (sale, preauth,
 * capture, void, return, rebill, payout…) and one ledger of its money (`ledger/`), in minor units
 * as bigint; views turn it back into decimal strings.
 *
 * @packageDocumentation
 */
import type { Status } from "@paykit/contracts"
import type { CardData, Outcome } from "../cards"
import type { OrderView } from "../views"
import type { ThreeDSState } from "../threeds"
import { BUCKETS, totalsOf, type Ledger, type LedgerKind } from "../ledger/index"

/** What an order is. */
export type OrderKind =
  | "sale"
  | "preauth"
  | "account-verification"
  | "rebill"
  | "payout"
  | "transfer"
  | "pan-eligibility"
  | "card-ref"
  | "recurring"

/** One transaction of an order. */
export interface Transaction {
  type: string
  status: Status
  /** Minor units, when the transaction moves an amount. */
  amount?: bigint
  serialNumber: string
  at: number
}

/** Where a hosted form of this order stands. */
export interface FormState {
  readonly operation: "sale" | "preauth" | "account-verification" | "payout"
  /** The form is waiting for the customer; after submission it continues like the direct call. */
  submitted: boolean
}

/** An order with everything the simulator tracks. */
export interface Order {
  readonly orderid: string
  readonly clientOrderId: string
  readonly login: string
  readonly controlKey: string
  readonly endpointId: string
  readonly kind: OrderKind
  /** The operation id that created the order. */
  readonly operation: string
  readonly currency: string
  /** Authorized (preauth) or charged (sale, rebill, payout) amount, minor units. */
  readonly amount: bigint
  /** The amount as sent (decimal string). */
  readonly amountText: string
  status: Status
  card?: CardData
  outcome: Outcome
  /** The order's money: every amount moved or reserved goes through it; handlers keep no sums. */
  ledger: Ledger
  errorCode?: string
  errorMessage?: string
  email?: string
  redirectUrl?: string
  serverCallbackUrl?: string
  merchantData?: string
  cardRefId?: string
  recurringPaymentId?: string
  threeDS?: ThreeDSState
  form?: FormState
  /** Fingerprint of the request (amount, currency, card) for client_orderid idempotency. */
  readonly fingerprint: string
  /** The first reply: a repeated identical request gets its shape with the order's current status. */
  reply?: Record<string, string>
  readonly transactions: Transaction[]
  readonly createdAt: number
}

/** All orders, by orderid and by (login, client_orderid). */
export class OrderStore {
  private readonly byId = new Map<string, Order>()
  private readonly byClient = new Map<string, Order>()
  private nextId = 1_000_001

  /** The next orderid to hand out (snapshots keep it). */
  get nextOrderId(): number {
    return this.nextId
  }

  set nextOrderId(value: number) {
    this.nextId = value
  }

  /** A fresh numeric orderid. Never reused, not even across reset. */
  newOrderId(): string {
    return String(this.nextId++)
  }

  add(order: Order): void {
    this.byId.set(order.orderid, order)
    this.byClient.set(clientKey(order.login, order.clientOrderId), order)
  }

  get(orderid: string): Order | undefined {
    return this.byId.get(orderid)
  }

  byClientOrderId(login: string, clientOrderId: string): Order | undefined {
    return this.byClient.get(clientKey(login, clientOrderId))
  }

  /** Any merchant's order with this client_orderid (test routes). */
  findClientOrderId(clientOrderId: string): Order | undefined {
    for (const order of this.byId.values()) if (order.clientOrderId === clientOrderId) return order
    return undefined
  }

  all(): Order[] {
    return [...this.byId.values()]
  }

  clear(): void {
    this.byId.clear()
    this.byClient.clear()
  }
}

function clientKey(login: string, clientOrderId: string): string {
  return `${login}\u0000${clientOrderId}`
}

/** The ledger kind of an order kind: which money operations apply to it. */
export function ledgerKindOf(kind: OrderKind): LedgerKind {
  return kind === "sale" || kind === "preauth" || kind === "rebill" || kind === "transfer" || kind === "payout" ? kind : "none"
}

/** Formats minor units as a decimal string in major units. */
export function formatMinor(minor: bigint, exponent: number): string {
  const negative = minor < 0n
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, "0")
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
  return negative ? `-${text}` : text
}

/** The JSON-safe view of an order (card masked, amounts as decimal strings). */
export function orderView(order: Order, exponent: number): OrderView {
  const view: OrderView = {
    orderid: order.orderid,
    client_orderid: order.clientOrderId,
    endpointId: order.endpointId,
    kind: order.kind,
    status: order.status,
    amount: formatMinor(order.amount, exponent),
    currency: order.currency,
    authorized: "",
    captured: "",
    returned: "",
    holdReleased: "",
    inFlight: "",
    voided: "",
    chargedBack: "",
    paidOut: "",
    settled: order.ledger.settled,
    transactions: order.transactions.map((tx) => {
      const t = { type: tx.type, status: tx.status, serialNumber: tx.serialNumber, at: tx.at }
      return tx.amount === undefined ? t : { ...t, amount: formatMinor(tx.amount, exponent) }
    })
  }
  const totals = totalsOf(order.ledger)
  for (const bucket of BUCKETS) view[bucket] = formatMinor(totals[bucket], exponent)
  view.inFlight = formatMinor(totals.inFlight, exponent)
  if (order.card !== undefined) {
    const c = order.card
    view.card = { masked: c.masked, bin: c.bin, last4: c.last4, brand: c.brand, expireMonth: c.expireMonth, expireYear: c.expireYear }
  }
  if (order.cardRefId !== undefined) view.cardRefId = order.cardRefId
  if (order.recurringPaymentId !== undefined) view.recurringPaymentId = order.recurringPaymentId
  if (order.threeDS !== undefined) view.threeDS = order.threeDS.state
  return view
}
