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
  // Only the orderid's last three digits count (orderid × 1000 mod 10^6). The simulator's orderids
  // are plain digits, whose last three are read here in Number arithmetic; BigInt's parse and two
  // bigint operations cost a status reply ~0.3 µs. Anything else goes through BigInt.
  const length = orderid.length
  if (length > 0 && Number.isSafeInteger(tx) && tx >= 0 && tx <= 2 ** 52) {
    let last3 = 0
    let scale = 1
    for (let i = length - 1; i >= 0; i--) {
      const digit = orderid.charCodeAt(i) - 48
      if (digit < 0 || digit > 9) return bigintApprovalCode(orderid, tx)
      if (scale < 1000) {
        last3 += digit * scale
        scale *= 10
      }
    }
    return String((last3 * 1000 + tx) % 1_000_000).padStart(6, "0")
  }
  return bigintApprovalCode(orderid, tx)
}

function bigintApprovalCode(orderid: string, tx: number): string {
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
