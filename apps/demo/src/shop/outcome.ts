/**
 * What the result page tells the customer, decided from the gateway's status reply alone: approved,
 * declined (declined or filtered, with the gateway's reason), failed (error) or pending (not final yet).
 */

/** The outcome of an order as the shop shows it. */
export interface ShopOutcome {
  readonly kind: "approved" | "declined" | "failed" | "pending"
  /** The gateway's status as it said it. */
  readonly status: string
  readonly orderid: string
  readonly client_orderid: string
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  /** BIN and last four at most. */
  readonly card?: string | undefined
  /** The gateway's `error-message`, for a decline or failure. */
  readonly reason?: string | undefined
  /** The gateway's `error-code`. */
  readonly code?: string | undefined
}

/** The fields of a status reply the outcome reads. */
export interface StatusFields {
  readonly status: string
  readonly amount?: string | undefined
  readonly currency?: string | undefined
  readonly bin?: string | undefined
  readonly "last-four-digits"?: string | undefined
  readonly "error-message"?: string | undefined
  readonly "error-code"?: string | undefined
}

const KIND: Readonly<Record<string, ShopOutcome["kind"]>> = { approved: "approved", declined: "declined", filtered: "declined", error: "failed" }

/** Maps a status reply to what the page says; anything not final is pending. */
export const outcomeOf = (ids: { readonly orderid: string; readonly client_orderid: string }, reply: StatusFields): ShopOutcome => {
  const kind = KIND[reply.status] ?? "pending"
  const card = reply.bin && reply["last-four-digits"] ? `${reply.bin}******${reply["last-four-digits"]}` : undefined
  return {
    kind,
    status: reply.status,
    ...ids,
    amount: reply.amount,
    currency: reply.currency,
    card,
    ...(kind === "declined" || kind === "failed" ? { reason: reply["error-message"], code: reply["error-code"] } : {})
  }
}
