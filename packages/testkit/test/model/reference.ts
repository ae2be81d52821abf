/**
 * The reference model of an order's money (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger), written apart from the
 * simulator: it imports nothing from `src/`. It knows only the rules as the decision states them
 * and predicts, for every step, whether the gateway must accept it, must refuse it, or may do
 * either (where decision 10 leaves the choice open; each such place is named in `why`).
 *
 * Time is the simulator's virtual clock: a transaction accepted at `t` is final at
 * `t + processingDelayMs`; an approved sale or capture settles `settlementDelayMs` after it is final.
 */
import type { Step, CardName } from "./steps"

/** The final outcome of a transaction. */
export type Outcome = "approved" | "declined" | "error" | "filtered"

/** What a card does to a sale or preauth (the testkit's test-card table, by name). */
export const CARD_OUTCOME: Record<CardName, Outcome> = {
  approved: "approved",
  declined: "declined",
  error: "error",
  filtered: "filtered"
}

/** A return on a preauth with nothing captured releases (part of) the hold; otherwise it refunds. */
export type Bucket = "charge" | "capture" | "refund" | "release" | "void"

export interface ModelTx {
  readonly type: "sale" | "preauth" | "capture" | "void" | "return"
  readonly bucket: Bucket
  readonly amount: bigint
  readonly acceptedAt: number
  readonly outcome: Outcome
  /** A void: the open amount it reverses (what it may show as in flight, or as hold released). */
  readonly reverses?: bigint
}

export interface ModelOrder {
  readonly index: number
  readonly orderid: string
  readonly kind: "sale" | "preauth"
  readonly amount: bigint
  readonly card: CardName
  readonly txs: ModelTx[]
  /**
   * Set once the simulator took a path decision 10 leaves open (see `why` of an "either"): from
   * then on the model predicts no exact money for the order, and only the invariants are checked.
   */
  fuzzy?: string
}

export type Verdict = "accept" | "refuse" | "either"

export interface Prediction {
  readonly verdict: Verdict
  readonly why: string
  /** The transaction an accepted step adds. */
  readonly tx?: { type: ModelTx["type"]; bucket: Bucket; amount: bigint; reverses?: bigint }
  /** Where the choice is open, what an acceptance makes the order. */
  readonly fuzzyIfAccepted?: string
}

export interface ModelConfig {
  readonly processingDelayMs: number
  readonly settlementDelayMs: number
}

/** Sums of an order's money at the model's current time, in cents. */
export interface Money {
  readonly original: "processing" | Outcome
  readonly authorized: bigint
  readonly capturedApproved: bigint
  readonly capturedInFlight: bigint
  readonly refundedApproved: bigint
  readonly refundedInFlight: bigint
  readonly releasedApproved: bigint
  readonly releasedInFlight: bigint
  readonly inFlight: bigint
  readonly voided: boolean
  readonly settled: boolean
  /** Captures and returns still processing (counted, whatever their amount). */
  readonly followUpsInFlight: number
  readonly voidApproved: boolean
  /** What an approved void reversed. */
  readonly voidReleases: bigint
  /** What a void still processing will reverse. */
  readonly voidInFlight: bigint
}

export class Model {
  now: number
  readonly orders: ModelOrder[] = []

  constructor(readonly config: ModelConfig, readonly startTime: number) {
    this.now = startTime
  }

  clone(): Model {
    const copy = new Model(this.config, this.startTime)
    copy.now = this.now
    for (const o of this.orders) {
      const order: ModelOrder = { ...o, txs: [...o.txs] }
      copy.orders.push(order)
    }
    return copy
  }

  /** The status of a transaction now. */
  statusOf(tx: ModelTx): "processing" | Outcome {
    return this.now >= tx.acceptedAt + this.config.processingDelayMs ? tx.outcome : "processing"
  }

  money(order: ModelOrder): Money {
    const sums = { capA: 0n, capF: 0n, refA: 0n, refF: 0n, relA: 0n, relF: 0n, flight: 0n }
    let settledAt = Infinity
    let voided = false
    let followUpsInFlight = 0
    let voidApproved = false
    let voidReleases = 0n
    let voidInFlight = 0n
    for (const tx of order.txs) {
      const status = this.statusOf(tx)
      const approved = status === "approved"
      const flying = status === "processing"
      if (flying) sums.flight += tx.amount
      if (flying && (tx.type === "capture" || tx.type === "return")) followUpsInFlight++
      if (tx.bucket === "void") {
        voided = true
        if (approved) {
          voidApproved = true
          voidReleases += tx.reverses ?? 0n
        }
        if (flying) voidInFlight += tx.reverses ?? 0n
      }
      if (tx.bucket === "capture") {
        if (approved) sums.capA += tx.amount
        if (flying) sums.capF += tx.amount
      }
      if (tx.bucket === "refund") {
        if (approved) sums.refA += tx.amount
        if (flying) sums.refF += tx.amount
      }
      if (tx.bucket === "release") {
        if (approved) sums.relA += tx.amount
        if (flying) sums.relF += tx.amount
      }
      if (approved && (tx.bucket === "charge" && order.kind === "sale" || tx.bucket === "capture")) {
        settledAt = Math.min(settledAt, tx.acceptedAt + this.config.processingDelayMs + this.config.settlementDelayMs)
      }
    }
    const original = this.statusOf(order.txs[0]!)
    return {
      original,
      authorized: original === "approved" ? order.amount : 0n,
      capturedApproved: sums.capA,
      capturedInFlight: sums.capF,
      refundedApproved: sums.refA,
      refundedInFlight: sums.refF,
      releasedApproved: sums.relA,
      releasedInFlight: sums.relF,
      inFlight: sums.flight,
      voided,
      settled: this.now >= settledAt,
      followUpsInFlight,
      voidApproved,
      voidReleases,
      voidInFlight
    }
  }

  /** What decision 10 says of a step on an existing order (sale, preauth, status, resend: always accepted). */
  predict(step: Step): Prediction {
    switch (step.op) {
      case "sale":
      case "preauth":
        return { verdict: "accept", why: "a new order", tx: { type: step.op, bucket: "charge", amount: 0n } }
      case "status":
      case "resend":
        return { verdict: "accept", why: `${step.op} of a known order` }
      case "capture":
        return this.predictCapture(this.orders[step.order]!, step.amount)
      case "void":
        return this.predictVoid(this.orders[step.order]!, step.amount)
      case "return":
        return this.predictReturn(this.orders[step.order]!, step.amount)
      case "advance":
      case "restart":
      case "pair":
        return { verdict: "accept", why: "control" }
    }
  }

  private predictCapture(order: ModelOrder, amountText: string | undefined): Prediction {
    const m = this.money(order)
    if (order.kind !== "preauth") return refuse("capture: only a preauth is captured")
    if (m.original !== "approved") return refuse(`capture: the preauth is ${m.original}, not approved`)
    if (m.voided) return refuse("capture: the order is voided")
    if (order.fuzzy !== undefined) return either(`capture: order is fuzzy (${order.fuzzy})`, { type: "capture", bucket: "capture", amount: amountText === undefined ? 0n : parseCents(amountText) })
    const open = order.amount - m.capturedApproved - m.capturedInFlight - m.releasedApproved - m.releasedInFlight
    const amount = amountText === undefined ? open : parseCents(amountText)
    if (amount <= 0n) return refuse(`capture: ${amount} cents is not a positive amount (open ${open})`)
    if (amount > open) return refuse(`capture: ${amount} cents > open hold ${open} (captures + hold released ≤ authorised, in flight included)`)
    const tx = { type: "capture" as const, bucket: "capture" as const, amount }
    if (m.settled) return { verdict: "either", why: "capture after an earlier capture settled: decision 10 does not say", tx }
    return { verdict: "accept", why: `capture ${amount} of open ${open}`, tx }
  }

  private predictVoid(order: ModelOrder, amountText: string | undefined): Prediction {
    const m = this.money(order)
    if (m.original !== "approved") return refuse(`void: the original is ${m.original}, not approved`)
    if (m.voided) return refuse("void: already voided")
    if (m.settled) return refuse("void: the order is settled")
    if (m.followUpsInFlight > 0) return refuse("void: a capture or return is in flight")
    if (order.fuzzy !== undefined) return either(`void: order is fuzzy (${order.fuzzy})`, { type: "void", bucket: "void", amount: 0n, reverses: 0n })
    // What a void reverses: captured money not refunded, plus the open hold.
    const openAmount = order.amount - m.releasedApproved - m.refundedApproved
    const tx = { type: "void" as const, bucket: "void" as const, amount: 0n, reverses: openAmount }
    if (openAmount <= 0n) return refuse("void: nothing is left open (the hold was released)")
    if (amountText !== undefined && parseCents(amountText) !== openAmount) {
      return refuse(`void: amount ${amountText} is not the whole open amount (${openAmount} cents): never partial`)
    }
    if (m.capturedApproved > 0n || m.refundedApproved > 0n) {
      // Decision 10: "nothing is ever captured or refunded on a voided order" — is such a void
      // refused, or does it reverse the capture/refund? It does not say.
      return { verdict: "either", why: "void after an approved capture or refund (before settlement): decision 10 does not say", tx, fuzzyIfAccepted: "voided after a capture/refund" }
    }
    return { verdict: "accept", why: "void of an approved, unsettled order with nothing in flight", tx }
  }

  private predictReturn(order: ModelOrder, amountText: string | undefined): Prediction {
    const m = this.money(order)
    if (m.original !== "approved") return refuse(`return: the original is ${m.original}, not approved`)
    if (m.voided) return refuse("return: the order is voided")
    if (order.fuzzy !== undefined) return either(`return: order is fuzzy (${order.fuzzy})`, { type: "return", bucket: "refund", amount: amountText === undefined ? 0n : parseCents(amountText) })
    let bucket: Bucket
    let available: bigint
    if (order.kind === "sale") {
      bucket = "refund"
      available = order.amount - m.refundedApproved - m.refundedInFlight
    } else if (m.capturedApproved === 0n && m.capturedInFlight === 0n) {
      bucket = "release"
      available = order.amount - m.releasedApproved - m.releasedInFlight
    } else if (m.capturedInFlight > 0n) {
      const amount = amountText === undefined ? 0n : parseCents(amountText)
      return { verdict: "either", why: "return on a preauth while a capture is in flight: refund or hold release, decision 10 does not say", tx: { type: "return", bucket: "refund", amount }, fuzzyIfAccepted: "return while a capture was in flight" }
    } else {
      bucket = "refund"
      available = m.capturedApproved - m.refundedApproved - m.refundedInFlight
    }
    const amount = amountText === undefined ? available : parseCents(amountText)
    if (amount <= 0n) return refuse(`return: ${amount} cents is not a positive amount (available ${available}, ${bucket})`)
    if (amount > available) return refuse(`return: ${amount} cents > available ${available} (${bucket === "release" ? "open hold" : "refunds ≤ captured or charged"}, in flight included)`)
    return { verdict: "accept", why: `return (${bucket}) ${amount} of ${available}`, tx: { type: "return", bucket, amount } }
  }

  /**
   * The amount a step without `amount` stands for (what is open to capture, to return, or to void),
   * used to pick explicit amounts around it; may be 0 or less when nothing is open.
   */
  natural(op: "capture" | "void" | "return", order: ModelOrder): bigint {
    const m = this.money(order)
    if (op === "capture") return order.amount - m.capturedApproved - m.capturedInFlight - m.releasedApproved - m.releasedInFlight
    if (op === "void") return order.amount - m.releasedApproved - m.refundedApproved
    if (order.kind === "sale") return order.amount - m.refundedApproved - m.refundedInFlight
    if (m.capturedApproved === 0n && m.capturedInFlight === 0n) return order.amount - m.releasedApproved - m.releasedInFlight
    return m.capturedApproved - m.refundedApproved - m.refundedInFlight
  }

  /** Applies a step whose verdict the simulator gave (`accepted`); `orderid` names a new order. */
  apply(step: Step, prediction: Prediction, accepted: boolean, orderid?: string): void {
    if (!accepted) return
    if (step.op === "sale" || step.op === "preauth") {
      const amount = parseCents(step.amount)
      const order: ModelOrder = { index: this.orders.length, orderid: orderid!, kind: step.op, amount, card: step.card, txs: [] }
      order.txs.push({ type: step.op, bucket: "charge", amount, acceptedAt: this.now, outcome: CARD_OUTCOME[step.card] })
      this.orders.push(order)
      return
    }
    if (step.op === "capture" || step.op === "void" || step.op === "return") {
      const order = this.orders[step.order]!
      const tx = prediction.tx
      if (tx === undefined) throw new Error(`model: ${step.op} accepted without a predicted transaction`)
      if (prediction.verdict === "either" && prediction.fuzzyIfAccepted !== undefined && order.fuzzy === undefined) order.fuzzy = prediction.fuzzyIfAccepted
      order.txs.push({ ...tx, acceptedAt: this.now, outcome: "approved" })
    }
  }

  advance(ms: number): void {
    this.now += ms
  }
}

function refuse(why: string): Prediction {
  return { verdict: "refuse", why }
}

function either(why: string, tx?: Prediction["tx"]): Prediction {
  return tx === undefined ? { verdict: "either", why } : { verdict: "either", why, tx }
}

/** Cents of a step's amount (steps carry valid two-decimal strings). */
export function parseCents(text: string): bigint {
  const [whole, fraction = ""] = text.split(".")
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, "0"))
}
