/**
 * What a model sequence runs with: the instances' policies (ms-scale, within every rule of
 * docs/fleet.md), the sequence's configuration, and the merchant's keys (which request each key
 * names).
 *
 * @packageDocumentation
 */

/** The policies of every instance: ms-scale, and within every rule of docs/fleet.md. */
export const POLICY = {
  /** Per-attempt timeout, and the processing window (`settleMs` equal to it). */
  windowMs: 300,
  deadlineMs: 2000,
  /** Longer than the deadline. */
  intentLeaseMs: 3000,
  /** A per-call deadline some calls ask for: longer than the lease (docs/fleet.md says to avoid it; the protocol must still hold). */
  longDeadlineMs: 5000,
  retry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 40, jitter: false },
  pollIntervalMs: 50,
  /** `recover()`: `olderThanMs` at least the deadline, `settleMs` the client's window. */
  recover: { olderThanMs: 2000, leaseMs: 1000, settleMs: 300, limit: 100 }
} as const

/**
 * How long the gateway of a world remembers an order after its last transaction, the promise a
 * client's reading of `order-not-found` ("never sent") rests on: 0 when the simulator forgets by
 * count (any order may go at once), its `maxAgeMs` when it forgets by age, forever otherwise. A
 * client that reads `order-not-found` as "never sent" for a send older than this is fooled by it;
 * the client's bound on that age, where it has one, belongs in the instances' options (world.ts) beside this.
 */
export function orderMemoryMs(config: WorldConfig): number {
  if (config.maxOrders !== null) return 0
  return config.maxAgeMs ?? Number.POSITIVE_INFINITY
}

/** How an instance is driven. */
export type Style = "promise" | "effect"

/** A sequence's configuration. */
export interface WorldConfig {
  /** One entry per instance slot: how its client is called. */
  readonly instances: ReadonlyArray<Style>
  /**
   * The simulator's `retention.maxOrders` (`null`: no limit by count): above it the oldest final
   * orders are forgotten however young they are, so the gateway promises to remember nothing.
   */
  readonly maxOrders: number | null
  /**
   * The simulator's `retention.maxAgeMs` (`null`: no limit by age): a final order is forgotten this
   * long after its last transaction, so the gateway remembers every order at least that long.
   */
  readonly maxAgeMs?: number | null | undefined
  /** `recover()` on a schedule: every this many ms, on the next instance in turn (`null`: only when a step asks). */
  readonly recoverEveryMs?: number | null | undefined
  /** The intent lease (default {@link POLICY}'s): above the deadline, by a little or by a lot. */
  readonly intentLeaseMs?: number | undefined
}

/**
 * Order-creating keys: `s` 0..5, even a preauth of 20.00, odd a sale of 10.00. Orders 0 and 1 are
 * made when the world opens (so calls on existing orders have orders from the first step); the
 * others only by the sequence's own steps (enough new orders for the simulator to forget old ones).
 */
export const SALE_KEYS = 6
/** The orders every sequence starts with. */
export const PRELUDE_ORDERS = 2
/** Keys per order: 0 and 1 the same amount (4.00), 2 another (3.00), 3 a void. */
export const ORDER_KEYS = 4

/** What an order-creating key makes. */
export type OrderKind = "preauth" | "sale"
/** The kind of order sale key `s` makes. */
export const kindOf = (s: number): OrderKind => (s % 2 === 1 ? "sale" : "preauth")
/** The amount of an order of `kind`. */
export const amountOf = (kind: OrderKind) => (kind === "preauth" ? "20.00" : "10.00")

/** What order key `k` of an order of `kind` asks for. */
export function orderCall(kind: OrderKind, k: number): { readonly method: "capture" | "return" | "void"; readonly amount: string | undefined } {
  if (k === 3) return { method: "void", amount: undefined }
  return { method: kind === "preauth" ? "capture" : "return", amount: k === 2 ? "3.00" : "4.00" }
}

