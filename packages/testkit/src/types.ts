/**
 * Public types of the simulator: options, merchants, faults and the JSON-safe views of its state.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import type { SimulatorSnapshot } from "./snapshot"

/** A merchant the simulator knows: credentials, endpoints and (for v4 operations) its RSA public key. */
export interface MerchantConfig {
  /** Login; also the OAuth consumer key. */
  login: string
  /** The merchant control key (control digests, OAuth HMAC key, callback control). */
  controlKey: string
  /** Endpoint ids that belong to this merchant. */
  endpointIds: number[]
  /** Endpoint group ids that belong to this merchant (usable wherever an endpoint id is). */
  endpointGroupIds?: number[]
  /** SPKI or PKCS#1 PEM of the public key that verifies OAuth RSA-SHA256 requests. */
  rsaPublicKeyPem?: string
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

/** Options of {@link createSimulator}. */
export interface SimulatorOptions {
  /** Merchants served; default: the single {@link testMerchant}. */
  merchants?: ReadonlyArray<MerchantConfig>
  /** Delay on the simulator clock until an asynchronous transaction is final; default 2000, 0 = final at the next look. */
  processingDelayMs?: number
  /** Delay on the simulator clock after which an approved charge is settled (and can no longer be voided); default 24 h. */
  settlementDelayMs?: number
  /** `"virtual"` (default) moves only by `advance`; `"real"` follows wall time plus advances. */
  clock?: "virtual" | "real"
  /** Epoch ms at which the virtual clock starts; default `Date.now()`. */
  startTime?: number
  /** Origin used in `redirect-url` links; `listen()` switches it to its real URL. */
  baseUrl?: string
  /** Delivers server callbacks; default `globalThis.fetch`. */
  callbackFetch?: typeof fetch
  /**
   * A snapshot (from {@link Simulator.snapshot}, possibly through JSON) to continue from: a restart
   * that keeps the state. The clock resumes at the snapshot's time (`startTime` is ignored); pass the
   * same merchants. Fault rules are not part of a snapshot. Any `version` but 1 throws.
   */
  restore?: SimulatorSnapshot
}

/** A running simulator: a web-standard fetch handler plus test controls. */
export interface Simulator {
  /** Handles one request in process, exactly as the HTTP server would. */
  readonly fetch: (request: Request) => Promise<Response>
  /** Serves {@link Simulator.fetch} over real HTTP; port 0 picks a free port. */
  listen(options?: { port?: number; host?: string }): Promise<{
    /** The server's URL, e.g. `http://127.0.0.1:4010`. */
    url: string
    /** Stops the server. */
    close(): Promise<void>
  }>
  /** The simulator clock. `advance` runs everything that falls due, in time order, and awaits callback deliveries. */
  readonly clock: {
    /** Epoch ms on the simulator clock. */
    now(): number
    /** Moves the virtual clock forward by `ms`, running everything that falls due. */
    advance(ms: number): Promise<void>
  }
  /** Fault injection controls. */
  readonly faults: {
    /** Adds a fault rule. */
    add(rule: FaultRule): void
    /** Removes every fault rule. */
    clear(): void
  }
  /** Every order, oldest first. */
  orders(): ReadonlyArray<OrderView>
  /** One order by the gateway's orderid. */
  order(orderid: string): OrderView | undefined
  /** One order by the merchant's client_orderid. */
  orderByClientOrderId(client_orderid: string): OrderView | undefined
  /** Every callback delivery attempt, oldest first. */
  callbackAttempts(): ReadonlyArray<CallbackAttempt>
  /**
   * Everything needed to continue in a new simulator (`createSimulator({ restore })`): clock, orders
   * and transactions, card refs, recurring payments, 3DS and form states, id counters, pending work,
   * the callback log and live OAuth nonces. JSON-safe (amounts as strings); never a PAN, CVV or key.
   */
  snapshot(): SimulatorSnapshot
  /** Forgets all orders, card refs, recurring payments, nonces, callbacks and faults; the clock keeps its time. */
  reset(): void
  /** Stops timers and any listening server; from the call on, the simulator changes no state (requests get a dropped connection). */
  close(): Promise<void>
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
  /** The endpoint (or endpoint group) the order was placed on. */
  endpointId: number
  /** What created the order: `sale`, `preauth`, `rebill`, `payout`, `transfer`, … */
  kind: string
  /** The order's status as `status` reports it. */
  status: string
  /** Decimal string in major units. */
  amount: string
  /** ISO 4217 currency code. */
  currency: string
  /** Amount captured so far, in major units. */
  captured: string
  /** Amount returned so far, in major units. */
  returned: string
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
}
