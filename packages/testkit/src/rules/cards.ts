/**
 * Test cards, magic amounts, and card data handling. The PAN is used only inside a request to pick
 * an outcome and is then reduced to a {@link CardData} (masked PAN, BIN, last four); the CVV is
 * never kept at all.
 *
 * @packageDocumentation
 */
import { maskPan } from "@paykit/contracts/card-data"
import { own } from "../http/own"

/** What the processor "answers" for a transaction. */
export type Outcome =
  | "approved"
  | "declined"
  | "insufficient-funds"
  | "threeds-challenge"
  | "error"
  | "filtered"
  | "slow-approved"
  /** Approved, then charged back {@link CHARGEBACK_DELAY_MS} after settlement (decision 17). */
  | "chargeback"

/** One row of the test-card table. */
export interface TestCard {
  /** The card number (PAN). */
  readonly number: string
  /** What the simulator does with a payment on this card. */
  readonly outcome: Outcome
  /** A human-readable description of the card's behaviour. */
  readonly description: string
}

/** The test cards (docs/decisions.md#test-cards). Any other Luhn-valid number approves. */
export const testCards: ReadonlyArray<TestCard> = [
  { number: "4111111111111111", outcome: "approved", description: "approved" },
  { number: "5555555555554444", outcome: "approved", description: "approved" },
  { number: "4000000000000002", outcome: "declined", description: "declined" },
  { number: "4000000000009995", outcome: "insufficient-funds", description: "declined: insufficient funds" },
  { number: "4000000000003220", outcome: "threeds-challenge", description: "3DS challenge; approved if passed on the access-control page, declined if failed" },
  { number: "4000000000000119", outcome: "error", description: "error (processor failure)" },
  { number: "4100000000000019", outcome: "filtered", description: "filtered (fraud screen)" },
  { number: "4000000000000259", outcome: "slow-approved", description: "stays processing until 10 simulated minutes pass, then approved" },
  { number: "4000000000001976", outcome: "chargeback", description: "approved; a chargeback (callback type=chargeback) 30 simulated days after settlement" }
]

const byNumber = new Map(testCards.map((card) => [card.number, card.outcome]))

/**
 * Magic amounts (decimal strings as sent). They choose the outcome when the card does not (any
 * approving card, a card reference, or a payout without a card).
 */
export const magicAmounts: ReadonlyArray<{
  /** The amount, as sent. */
  readonly amount: string
  /** The outcome it chooses. */
  readonly outcome: Outcome
  /** A human-readable description of the outcome. */
  readonly description: string
}> = [
  { amount: "40.05", outcome: "declined", description: "declined" },
  { amount: "40.51", outcome: "insufficient-funds", description: "declined: insufficient funds" },
  { amount: "50.01", outcome: "error", description: "error (processor failure)" }
]

const byAmount = new Map(magicAmounts.map((m) => [m.amount, m.outcome]))

/** How long after settlement a `chargeback` card's order is charged back, in simulated ms (30 days). */
export const CHARGEBACK_DELAY_MS = 30 * 24 * 60 * 60 * 1000

/** How long a `slow-approved` card stays processing, in simulated ms. */
export const SLOW_CARD_DELAY_MS = 10 * 60 * 1000

/** The outcome of a transaction with this card (optional) and amount. */
export function outcomeFor(pan: string | undefined, amount: string | undefined): Outcome {
  const byCard = pan === undefined ? undefined : byNumber.get(pan)
  if (byCard !== undefined && byCard !== "approved") return byCard
  return (amount === undefined ? undefined : byAmount.get(amount)) ?? "approved"
}

/** The outcome of a merchant-initiated charge (rebill, recurring charge, payout): no 3DS, otherwise the card's (or a magic amount's) outcome. */
export function rebillOutcome(cardOutcome: Outcome, amount: string | undefined): Outcome {
  if (cardOutcome !== "approved" && cardOutcome !== "threeds-challenge" && cardOutcome !== "chargeback") return cardOutcome
  const byAmount = outcomeFor(undefined, amount)
  // The chargeback card keeps charging back what it approves; a magic amount still decides first.
  return cardOutcome === "chargeback" && byAmount === "approved" ? "chargeback" : byAmount
}

/** Final status, error code and message of an outcome. */
export function finalOf(outcome: Outcome): { status: "approved" | "declined" | "error" | "filtered"; errorCode?: string; errorMessage?: string } {
  switch (outcome) {
    case "approved":
    case "slow-approved":
    case "threeds-challenge":
    case "chargeback":
      return { status: "approved" }
    case "declined":
      return { status: "declined", errorCode: "05", errorMessage: "Do not honor" }
    case "insufficient-funds":
      return { status: "declined", errorCode: "51", errorMessage: "Insufficient funds" }
    case "error":
      return { status: "error", errorCode: "96", errorMessage: "Processor failure" }
    case "filtered":
      return { status: "filtered", errorCode: "fraud", errorMessage: "Declined by the fraud screen" }
  }
}

/** What the simulator keeps of a card: never the full PAN, never the CVV. */
export interface CardData {
  readonly masked: string
  readonly bin: string
  readonly last4: string
  readonly brand: string
  readonly expireMonth: string
  readonly expireYear: string
  readonly holder?: string
  /** Outcome chosen by the test-card table when the card was seen (replayed by rebills). */
  readonly outcome: Outcome
  /** Keyed hash of the PAN (per-simulator random key), only to compare two requests under one client_orderid. */
  readonly fingerprint: string
}

/** The card brand by its leading digits. */
function brandOf(pan: string): string {
  if (pan.startsWith("4")) return "VISA"
  const two = Number(pan.slice(0, 2))
  const four = Number(pan.slice(0, 4))
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return "MASTERCARD"
  if (two === 34 || two === 37) return "AMEX"
  if (pan.startsWith("6011") || two === 65) return "DISCOVER"
  return "UNKNOWN"
}

/** The four-digit year of an `expire_year` sent with 2 or 4 digits (decision 15): `30` is 2030. */
export function fullYear(year: string): string {
  return year.length === 2 ? `20${year}` : year
}

/** Reduces a PAN (and expiry) to what may be kept; the year is kept with four digits. */
export function cardData(pan: string, expireMonth: string, expireYear: string, holder: string | undefined, fingerprint: string): CardData {
  const data = {
    masked: maskPan(pan),
    bin: pan.slice(0, 6),
    last4: pan.slice(-4),
    brand: brandOf(pan),
    expireMonth,
    expireYear: fullYear(expireYear),
    outcome: byNumber.get(pan) ?? "approved",
    // Engine.fingerprint hands out a slice of the digest's hex: a kept card keeps its own copy.
    fingerprint: own(fingerprint)
  }
  return holder === undefined ? data : { ...data, holder }
}
