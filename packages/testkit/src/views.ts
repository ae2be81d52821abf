/**
 * JSON-safe views and configuration records of the simulator: merchants, fault rules, orders,
 * transactions and callback attempts. At the bottom of the package: imports nothing of it.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
/** A merchant the simulator knows: credentials, endpoints and (for v4 operations) its RSA public key. */
export interface MerchantConfig {
  /** Login; also the OAuth consumer key. */
  login: string
  /** The merchant control key (control digests, OAuth HMAC key, callback control). */
  controlKey: string
  /**
   * The key this merchant's callbacks and final redirects are signed with, when it is not
   * `controlKey`: set it to the previous key to test a key rotation (requests are still verified
   * with `controlKey` only, as the gateway does while its callbacks lag behind). Default: `controlKey`.
   */
  callbackControlKey?: string
  /**
   * Endpoint ids that belong to this merchant. int64: past 2^53 give them as digit strings (or
   * bigint); a number that is no longer exact is refused.
   */
  endpointIds: ReadonlyArray<number | string | bigint>
  /** Endpoint group ids that belong to this merchant (usable wherever an endpoint id is); as {@link MerchantConfig.endpointIds}. */
  endpointGroupIds?: ReadonlyArray<number | string | bigint>
  /** SPKI or PKCS#1 PEM of the public key that verifies OAuth RSA-SHA256 requests. */
  rsaPublicKeyPem?: string
  /**
   * How this merchant's control digests write amounts (docs/decisions.md#2-amounts-in-cents): `"cents"` (the
   * default: × 100 for every currency, as the gateway's libraries do) or `"iso4217"` (the
   * currency's exponent: JPY 0, USD 2, KWD 3).
   */
  minorUnits?: "cents" | "iso4217"
}

/** The kinds of fault the simulator can inject (see the README, "Faults"). */
export type FaultKind = "latency" | "http-500" | "reset-before" | "reset-after" | "callback-fail"

/** One fault rule: which operation, which fault and how often. */
export interface FaultRule {
  /** Operation id the rule applies to; `"*"` or absent means every operation. */
  operation?: OperationId | "*"
  /** The fault to inject. */
  kind: FaultKind
  /** Chance in 0..1 that a matching request is hit; default 1. */
  probability?: number
  /** The most times the rule fires; default unlimited. */
  count?: number
  /** Added delay for `latency`, in real milliseconds; default 100. */
  latencyMs?: number
}

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

/** One delivery attempt of a server callback. The URL is shown without query or credentials. */
export interface CallbackAttempt {
  /** The order the callback is about. */
  orderid: string
  /** The merchant's order id. */
  client_orderid: string
  /** The status the callback reported. */
  status: string
  /** The merchant's callback URL. */
  url: string
  /** Attempt number, from 1. */
  attempt: number
  /** Epoch ms on the simulator clock. */
  at: number
  /** The HTTP status the merchant answered, or `"error"` when the request failed. */
  outcome: number | "error"
  /** The network error, when the request failed. */
  error?: string
  /**
   * Why the simulator refused to send this callback at all (its target is not allowed by
   * `callbackTargets`, e.g. a link-local metadata address); no request left the simulator and
   * the callback is not retried.
   */
  refused?: string
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
