/**
 * The order store. An order (`orderid`) carries a sequence of transactions (sale, preauth,
 * capture, void, return, rebill, payout…) and one ledger of its money (`ledger/`), in minor units
 * as bigint; views turn it back into decimal strings.
 *
 * @packageDocumentation
 */
import type { Status } from "@paykit/contracts"
import type { CardData, Outcome } from "../rules/cards"
import type { OrderView } from "./views"
import type { ThreeDSState } from "../rules/threeds"
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
  reply?: Record<string, string> | undefined
  readonly transactions: Transaction[]
  readonly createdAt: number
}

/** What a new order is made of (the rest is added as the order goes on). */
type OrderInit = Pick<Order, "orderid" | "clientOrderId" | "login" | "controlKey" | "endpointId" | "kind" | "operation" | "currency" | "amount" | "amountText" | "status" | "outcome" | "ledger" | "fingerprint" | "transactions" | "createdAt">

const PLAIN_REPLY_KEYS = ["type", "status", "serial-number", "merchant-order-id", "paynet-order-id", "end-point-id"] as const

/**
 * The stored form of an {@link Order}: every field in the object itself (no per-order closures, no
 * second object for the first reply). Most first replies are the plain AsyncResponse of the order,
 * which repeats its own ids; such a reply is kept as its status and serial-number only and rebuilt,
 * key for key, when read. Any other reply is kept as it was given.
 */
export class StoredOrder implements Order {
  declare readonly orderid: string
  declare readonly clientOrderId: string
  declare readonly login: string
  declare readonly controlKey: string
  declare readonly endpointId: string
  declare readonly kind: OrderKind
  declare readonly operation: string
  declare readonly currency: string
  declare readonly amount: bigint
  declare readonly amountText: string
  declare status: Status
  declare outcome: Outcome
  declare ledger: Ledger
  declare readonly fingerprint: string
  declare readonly transactions: Transaction[]
  declare readonly createdAt: number
  declare card?: CardData
  declare errorCode?: string
  declare errorMessage?: string
  declare email?: string
  declare redirectUrl?: string
  declare serverCallbackUrl?: string
  declare merchantData?: string
  declare cardRefId?: string
  declare recurringPaymentId?: string
  declare threeDS?: ThreeDSState
  declare form?: FormState
  /** A reply that is not plain, or the status of a plain one (then {@link StoredOrder.#replySerial} is its serial-number). */
  #reply: Record<string, string> | Status | undefined = undefined
  #replySerial: string | undefined = undefined

  constructor(init: OrderInit) {
    this.orderid = init.orderid
    this.clientOrderId = init.clientOrderId
    this.login = init.login
    this.controlKey = init.controlKey
    this.endpointId = init.endpointId
    this.kind = init.kind
    this.operation = init.operation
    this.currency = init.currency
    this.amount = init.amount
    this.amountText = init.amountText
    this.status = init.status
    this.outcome = init.outcome
    this.ledger = init.ledger
    this.fingerprint = init.fingerprint
    this.transactions = init.transactions
    this.createdAt = init.createdAt
  }

  get reply(): Record<string, string> | undefined {
    const kept = this.#reply
    if (typeof kept !== "string") return kept
    return {
      type: "async-response",
      status: kept,
      "serial-number": this.#replySerial!,
      "merchant-order-id": this.clientOrderId,
      "paynet-order-id": this.orderid,
      "end-point-id": String(this.endpointId)
    }
  }

  set reply(value: Record<string, string> | undefined) {
    if (value !== undefined && this.isPlain(value)) {
      this.#reply = value["status"] as Status
      this.#replySerial = value["serial-number"]
    } else {
      this.#reply = value
      this.#replySerial = undefined
    }
  }

  private isPlain(reply: Record<string, string>): boolean {
    const keys = Object.keys(reply)
    if (keys.length !== PLAIN_REPLY_KEYS.length) return false
    for (let i = 0; i < keys.length; i++) if (keys[i] !== PLAIN_REPLY_KEYS[i]) return false
    return (
      reply["type"] === "async-response" &&
      typeof reply["status"] === "string" &&
      typeof reply["serial-number"] === "string" &&
      reply["merchant-order-id"] === this.clientOrderId &&
      reply["paynet-order-id"] === this.orderid &&
      reply["end-point-id"] === String(this.endpointId)
    )
  }
}

/**
 * The number an orderid is the decimal text of (digits, no leading zero, below 2^53), or -1. The
 * simulator's own orderids all are (`String(n)`); only a restored snapshot can bring another.
 */
export function orderidNumber(orderid: string): number {
  const length = orderid.length
  if (length === 0 || length > 15 || (length > 1 && orderid.charCodeAt(0) === 48)) return -1
  let n = 0
  for (let i = 0; i < length; i++) {
    const digit = orderid.charCodeAt(i) - 48
    if (digit < 0 || digit > 9) return -1
    n = n * 10 + digit
  }
  return n
}

/**
 * All orders, by orderid and by (login, client_orderid), oldest first. The second index is a map per
 * login keyed by the order's own client_orderid string, so it costs no extra key string per order.
 *
 * The first index is keyed by the orderid's number while every orderid is one ({@link orderidNumber}):
 * a lookup in a map of a few hundred thousand orders then compares numbers held in the map itself
 * instead of loading each candidate key's string from elsewhere in the heap (a cache miss each), and
 * hashes a number instead of the request's fresh orderid text. An orderid that is not a number's
 * text (a restored snapshot's) turns it, once, into a map by orderid text, rebuilt in the same order.
 */
export class OrderStore {
  private byNumber: Map<number, Order> | undefined = new Map()
  private byText: Map<string, Order> | undefined = undefined
  private readonly byClient = new Map<string, Map<string, Order>>()
  private nextId = 1_000_001

  /** The next orderid to hand out (snapshots keep it). */
  get nextOrderId(): number {
    return this.nextId
  }

  set nextOrderId(value: number) {
    this.nextId = value
  }

  /** How many orders are kept. */
  get size(): number {
    return (this.byNumber ?? this.byText!).size
  }

  /** A fresh numeric orderid. Never reused, not even across reset or after an order is forgotten. */
  newOrderId(): string {
    return String(this.nextId++)
  }

  add(order: Order): void {
    const n = this.byNumber === undefined ? -1 : orderidNumber(order.orderid)
    if (n >= 0) this.byNumber!.set(n, order)
    else this.textIndex().set(order.orderid, order)
    let ofLogin = this.byClient.get(order.login)
    if (ofLogin === undefined) this.byClient.set(order.login, (ofLogin = new Map()))
    ofLogin.set(order.clientOrderId, order)
  }

  get(orderid: string): Order | undefined {
    if (this.byNumber === undefined) return this.byText!.get(orderid)
    // Every key is a number's text: any other text names no order.
    const n = orderidNumber(orderid)
    return n < 0 ? undefined : this.byNumber.get(n)
  }

  byClientOrderId(login: string, clientOrderId: string): Order | undefined {
    return this.byClient.get(login)?.get(clientOrderId)
  }

  /** Any merchant's order with this client_orderid (test routes). */
  findClientOrderId(clientOrderId: string): Order | undefined {
    for (const order of this.values()) if (order.clientOrderId === clientOrderId) return order
    return undefined
  }

  /** Forgets one order (retention): both indexes. */
  delete(order: Order): void {
    if (this.get(order.orderid) !== order) return
    if (this.byNumber !== undefined) this.byNumber.delete(orderidNumber(order.orderid))
    else this.byText!.delete(order.orderid)
    const ofLogin = this.byClient.get(order.login)
    if (ofLogin?.get(order.clientOrderId) === order) ofLogin.delete(order.clientOrderId)
  }

  /** Every order, oldest first, without copying (do not add while iterating). */
  values(): IterableIterator<Order> {
    return (this.byNumber ?? this.byText!).values()
  }

  all(): Order[] {
    return [...this.values()]
  }

  clear(): void {
    this.byNumber = new Map()
    this.byText = undefined
    this.byClient.clear()
  }

  /** The index by orderid text, made (once) from the numeric one in its order. */
  private textIndex(): Map<string, Order> {
    if (this.byText === undefined) {
      this.byText = new Map()
      for (const order of this.byNumber!.values()) this.byText.set(order.orderid, order)
      this.byNumber = undefined
    }
    return this.byText
  }
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
