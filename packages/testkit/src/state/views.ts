/**
 * JSON-safe views of the simulator's state: orders, their transactions and cards, and broken ledger
 * invariants. `orderView` (orders.ts) makes them; the test routes, the dashboard and
 * `sim.orders()` show them.
 *
 * @packageDocumentation
 */

/** A transaction of an order, JSON-safe. */
export interface TransactionView {
  /** Transaction type, e.g. `sale`, `capture`, `return`. */
  type: string
  /** Its status. */
  status: string
  /** Decimal string in major units. */
  amount?: string
  /** The gateway's `serial-number` of the transaction. */
  serialNumber: string
  /** Epoch ms on the simulator clock. */
  at: number
}

/** The card of an order: never the PAN, never the CVV. */
export interface CardView {
  /** First six, asterisks, last four: `411111******1111`. */
  masked: string
  /** First six digits. */
  bin: string
  /** Last four digits. */
  last4: string
  /** Card brand. */
  brand: string
  /** Expiry month, two digits. */
  expireMonth: string
  /** Expiry year, four digits. */
  expireYear: string
}

/** An order as the test routes show it: amounts as decimal strings, the card masked. */
export interface OrderView {
  /** The gateway's order id. */
  orderid: string
  /** The merchant's order id. */
  client_orderid: string
  /** The endpoint (or endpoint group) the order was placed on, as decimal digits (int64: never a lossy number). */
  endpointId: string
  /** What created the order: `sale`, `preauth`, `rebill`, `payout`, `transfer`, … */
  kind: string
  /** The order's status as `status` reports it. */
  status: string
  /** Decimal string in major units. */
  amount: string
  /** ISO 4217 currency code. */
  currency: string
  /**
   * The ledger (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger), committed money in major units. Authorised: an approved
   * preauth's hold, or an approved sale, rebill or transfer (authorised and captured at once).
   */
  authorized: string
  /** Captured so far (approved captures; a sale's whole amount once approved). */
  captured: string
  /** Refunded so far by approved returns of captured money. */
  returned: string
  /** Hold released so far: returns on an uncaptured preauth, and what a void of a preauth released. */
  holdReleased: string
  /** Accepted and still processing: every reservation not yet approved, declined or failed. */
  inFlight: string
  /** Captured money a void reversed (a voided sale: its amount). */
  voided: string
  /** Debited by chargebacks after settlement. */
  chargedBack: string
  /** Paid out (payouts, after payout-pay for the two-step ones). */
  paidOut: string
  /** Whether the charge has settled (and can no longer be voided). */
  settled: boolean
  /** The card, masked, when the order has one. */
  card?: CardView
  /** The card reference created from or used by the order. */
  cardRefId?: string
  /** The recurring payment that created the order. */
  recurringPaymentId?: string
  /** The 3-D Secure state of the order, when it went through 3-D Secure. */
  threeDS?: string
  /** The order's transactions, oldest first. */
  transactions: TransactionView[]
}

/** A broken ledger invariant: a simulator bug, never a merchant error (see `sim.checkInvariants()`). */
export interface InvariantViolation {
  /** The order whose ledger broke it. */
  orderid: string
  /** The invariant's stable id, e.g. `refunds-within-captured`. */
  invariant: string
  /** What the numbers were (minor units). */
  detail: string
  /** What the simulator was doing (e.g. `accept capture`, `finalize return`), or `check` for a check on demand. */
  during: string
  /** Epoch ms on the simulator clock. */
  at: number
}
