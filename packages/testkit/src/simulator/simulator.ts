/**
 * What a simulator is to its user: the options {@link createSimulator} takes and the
 * {@link Simulator} it returns (a fetch handler, a server and the test controls).
 *
 * @packageDocumentation
 */
import type { SimulatorSnapshot } from "../snapshot/format"
import type { LoggedRequest, REQUEST_LOG_CAPACITY, RequestRecord } from "../http/request-log"
import type { RetentionPolicy } from "../state/retention"
import type { OrderView, InvariantViolation } from "../state/views"
import type { MerchantConfig } from "../auth/merchant"
import type { FaultRule } from "../rules/faults"
import type { CallbackAttempt } from "../callbacks/sender"
import type { CallbackResolver, CallbackTransport } from "../callbacks/targets"
import type { RequestLimits, TestRouteAccess } from "../http/edge"
import type { RateLimit } from "../http/fair-use"

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
  /**
   * Delivers server callbacks in process instead of over the network (a receiver you wrote). Given
   * alone, its targets are not checked; give `callbackTargets` too to check them.
   */
  callbackFetch?: typeof fetch
  /**
   * Where callbacks may go besides loopback (which is always allowed): host names (`hooks.example.com`,
   * `*.example.com`), addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`). Link-local and metadata
   * addresses (169.254.0.0/16, fe80::/10, 100.100.100.200, fd00:ec2::254, …) are refused unless an
   * address or range inside them is listed. A host name is resolved at each delivery and the
   * connection goes to the address that was checked. A refused callback is not sent and shows in
   * the callback log with its reason (`refused`). Default: `[]` (loopback only).
   */
  callbackTargets?: ReadonlyArray<string>
  /** Resolves callback host names (default: the system resolver); tests inject one. */
  callbackResolver?: CallbackResolver
  /** Sends a checked callback (default: fetch for an address, node:http pinned to the checked address for a name); tests inject one. */
  callbackTransport?: CallbackTransport
  /** Request limits of `listen()`: body size (64 KB) and header / request timeouts. */
  limits?: RequestLimits
  /** Per-merchant fair use: a token bucket on the simulator clock; off when absent. */
  rateLimit?: RateLimit
  /**
   * Who may use the test routes and the dashboard (`/__sim/*` but the hosted payment and 3DS pages)
   * over `listen()`: by default only when the server listens on loopback; `{ expose: true }` on any
   * address; `{ adminToken }` to anyone sending `Authorization: Bearer <token>` (shared mode).
   * `sim.fetch` (in process) is never gated.
   */
  testRoutes?: TestRouteAccess
  /** Called once per answered request (HTTP and in process) with what may be logged; `paykit-sim` prints it. */
  onRequest?: (record: RequestRecord) => void
  /**
   * A snapshot (from {@link Simulator.snapshot}, possibly through JSON) to continue from: a restart
   * that keeps the state. The clock resumes at the snapshot's time (`startTime` is ignored); pass the
   * same merchants. Fault rules are not part of a snapshot. Any `version` but the current {@link SNAPSHOT_VERSION} throws.
   */
  restore?: SimulatorSnapshot
  /**
   * Serves the dashboard at `/__sim/ui` (orders, ledgers, callbacks, a live request log, actions).
   * Default `false`; `paykit-sim` turns it on. Like every `/__sim` route it can reset the sandbox,
   * so serve it only where the people who can reach it may do that.
   */
  dashboard?: boolean
  /**
   * Test mode (default `true`): a refused signature (`control-mismatch`, `oauth-bad-signature`) is
   * explained in `error-message`: the scheme, the fields in digest (or base-string) order and the
   * amount as the simulator put it in, never the key and never the expected digest. `false` answers
   * as tersely as the gateway does.
   */
  testMode?: boolean
  /**
   * Which final orders the simulator forgets, so memory stays bounded under sustained traffic: above
   * `maxOrders` the oldest final orders go, and any final order whose last transaction is older than
   * `maxAgeMs` on the simulator clock. Orders with money or callbacks in flight are never forgotten.
   * A forgotten order answers like one that never existed (`order-not-found`). Default
   * `{ maxOrders: 200_000, maxAgeMs: 120 days }` (a day of a busy sandbox; the chargeback window); `Infinity` turns either limit off.
   */
  retention?: RetentionPolicy
}

/** A running simulator: a web-standard fetch handler plus test controls. */
export interface Simulator {
  /**
   * Handles one request in process, exactly as the HTTP server would. `init.signal`, as WHATWG
   * `fetch(input, init)` takes it: aborted before the request is handled, the request is never
   * handled; aborted while it is handled, the call rejects with the signal's reason once it was.
   */
  readonly fetch: (request: Request, init?: { readonly signal?: AbortSignal | null | undefined }) => Promise<Response>
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
  /**
   * Every broken ledger invariant: those recorded when a ledger change was attempted (the change is
   * then refused as an internal error and not applied) plus a fresh check of every order now. Empty
   * when all money adds up; tests assert that.
   */
  checkInvariants(): ReadonlyArray<InvariantViolation>
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
  /** The request log: recent requests as one-line records, never card data or secrets. */
  readonly requests: {
    /** Records kept (the newest {@link REQUEST_LOG_CAPACITY}), oldest first; only those after `afterSeq` when given. */
    entries(afterSeq?: number): ReadonlyArray<LoggedRequest>
    /** Calls `listener` with each new request once it is answered; returns the function that stops it. */
    subscribe(listener: (record: LoggedRequest) => void): () => void
  }
  /** Stops timers and any listening server; from the call on, the simulator changes no state (requests get a dropped connection). */
  close(): Promise<void>
}
