/**
 * Card references and recurring payments as the simulator keeps them.
 *
 * @packageDocumentation
 */
import type { CardData } from "../cards"

/** A stored card reference. */
export interface CardRef {
  readonly id: string
  readonly login: string
  readonly card: CardData
  readonly orderid: string
}

/** A recurring payment subscription. */
export interface RecurringPayment {
  readonly id: string
  readonly clientOrderId: string
  readonly amountText: string
  readonly amount: bigint
  readonly currency: string
  readonly card: CardData
  readonly period?: "day" | "week" | "month"
  readonly interval: number
  /** Epoch ms after which no charge is made (end of the finish date), if any. */
  readonly finishAt?: number
  /** Charges made so far. */
  charges: number
  /** The merchant, endpoint and operation of the create request (each charge's order gets them). */
  readonly login: string
  readonly endpointId: string
  readonly operation: string
  /** Fields of the create request the charges' orders carry (email, redirect and callback URLs, merchant data). */
  readonly orderFields: Readonly<Record<string, string>>
}

