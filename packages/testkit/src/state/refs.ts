/**
 * Card references and recurring payments as the simulator keeps them.
 *
 * @packageDocumentation
 */
import type { CardData } from "../rules/cards"

/** A stored card reference. */
export interface CardRef {
  readonly id: string
  readonly login: string
  readonly card: CardData
  readonly orderid: string
}

/** A recurring payment subscription. Amount, card and schedule change by update-recurring-payment. */
export interface RecurringPayment {
  readonly id: string
  readonly clientOrderId: string
  amountText: string
  amount: bigint
  readonly currency: string
  card: CardData
  period?: "day" | "week" | "month"
  interval: number
  /** Epoch ms after which no charge is made (end of the finish date), if any. */
  finishAt?: number
  /**
   * When the queued scheduled charge is due: a queued job for any other time is stale (an update
   * replaced it); `null` when none is queued; absent in snapshots from before updates existed.
   */
  nextChargeAt?: number | null
  /** Charges made so far (scheduled ones; charges by process-recurring-payment are counted apart). */
  charges: number
  /** Charges made by process-recurring-payment. */
  processed?: number
  /** The merchant, endpoint and operation of the create request (each charge's order gets them). */
  readonly login: string
  readonly endpointId: string
  readonly operation: string
  /** Fields of the create request the charges' orders carry (email, redirect and callback URLs, merchant data). */
  readonly orderFields: Readonly<Record<string, string>>
}
