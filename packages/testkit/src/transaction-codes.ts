/**
 * The codes a transaction shows the merchant in status replies and callbacks, derived from the
 * simulator's own ids alone (never from card data), so a replay or a restart shows the same ones.
 *
 * @packageDocumentation
 */

/**
 * A deterministic six-digit approval code of transaction `tx` (its index in the order; 0 is the
 * original): from the simulator's ids alone, never from card data. Distinct for the first 1000
 * transactions of an order.
 */
export function approvalCode(orderid: string, tx = 0): string {
  return String((BigInt(orderid) * 1000n + BigInt(tx)) % 1_000_000n).padStart(6, "0")
}

/** A deterministic processor reference of transaction `tx`: the orderid and the index, unique across the simulator. */
export function processorRrn(orderid: string, tx = 0): string {
  return `${orderid.padStart(9, "0")}${String(tx).padStart(3, "0")}`
}

/** The callback `type` the gateway sends for a transaction type: a return is a `reversal`. */
export function callbackType(txType: string): string {
  return txType === "return" ? "reversal" : txType
}
