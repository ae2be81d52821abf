/**
 * The chaos plan: every payment's flow, card, amount, currency and 3DS answer, drawn from the seed
 * BEFORE the run starts, so concurrency cannot change what is asked (only the timing of faults).
 */
import { createRng } from "../rng"

export type Flow = "sale" | "preauth-capture" | "sale-return" | "rebill" | "payout" | "3ds-sale" | "status-lookup"

export interface PlannedPayment {
  readonly index: number
  readonly flow: Flow
  readonly clientOrderId: string
  /** The rebill's own client_orderid (flow "rebill"). */
  readonly rebillClientOrderId?: string
  readonly card: string
  readonly amount: string
  readonly currency: string
  /** The answer given on the 3DS access-control page. */
  readonly acs: "pass" | "fail"
  /** Indexes (mod the number known by then) of earlier payments a status-lookup flow reads. */
  readonly lookups: ReadonlyArray<number>
}

/** Flow weights (per 100). */
const MIX: ReadonlyArray<readonly [Flow, number]> = [
  ["sale", 25],
  ["preauth-capture", 15],
  ["sale-return", 15],
  ["rebill", 10],
  ["payout", 10],
  ["3ds-sale", 10],
  ["status-lookup", 15]
]

/** Cards for plain sales and preauths: mostly approving, then every final outcome. */
const CARDS = [
  "4111111111111111", "4111111111111111", "5555555555554444", "5555555555554444", "4111111111111111", "5555555555554444",
  "4000000000000002", "4000000000009995", "4000000000000119", "4100000000000019"
]

const CURRENCIES = ["USD", "USD", "EUR", "JPY", "KWD"] as const
const MAGIC = new Set(["40.05", "40.51", "50.01"])

function amountFor(rng: ReturnType<typeof createRng>, currency: string): string {
  // The magic amounts decide outcomes too; keep some, so declined rebills and payouts occur.
  if ((currency === "USD" || currency === "EUR") && rng.chance(0.05)) return rng.pick([...MAGIC])
  const major = 1 + rng.int(998)
  if (currency === "JPY") return String(major * 10)
  // KWD written with its three ISO digits; the third is 0 because the digest carries cents
  // (decision 2), where a non-zero third digit is an input error, never rounded.
  if (currency === "KWD") return `${major}.${String(rng.int(100)).padStart(2, "0")}0`
  const text = `${major}.${String(rng.int(100)).padStart(2, "0")}`
  return MAGIC.has(text) ? `${major}.00` : text
}

export function planPayments(count: number, seed: number): PlannedPayment[] {
  const rng = createRng(seed)
  const total = MIX.reduce((sum, [, weight]) => sum + weight, 0)
  const out: PlannedPayment[] = []
  for (let index = 0; index < count; index++) {
    let roll = rng.int(total)
    let flow: Flow = "sale"
    for (const [candidate, weight] of MIX) {
      if (roll < weight) {
        flow = candidate
        break
      }
      roll -= weight
    }
    const currency = flow === "3ds-sale" ? "USD" : rng.pick(CURRENCIES)
    const clientOrderId = `chaos-${seed}-${index}`
    const payment: PlannedPayment = {
      index,
      flow,
      clientOrderId,
      card: flow === "payout" ? "4111111111111111" : rng.pick(CARDS),
      amount: amountFor(rng, currency),
      currency,
      acs: rng.chance(0.8) ? "pass" : "fail",
      lookups: flow === "status-lookup" ? [rng.int(1 << 30), rng.int(1 << 30)] : []
    }
    out.push(flow === "rebill" ? { ...payment, rebillClientOrderId: `${clientOrderId}-rebill` } : payment)
  }
  return out
}
