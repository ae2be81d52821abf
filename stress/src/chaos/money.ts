/**
 * Amounts of any currency the chaos run uses (JPY 0, USD/EUR 2, KWD 3 decimals) as bigint
 * thousandths of a major unit, so sums of different orders of one currency are exact.
 */

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,3}))?$/

/** "12.3" → 12300n. Throws on anything but a non-negative decimal string with at most 3 decimals. */
export function milli(text: unknown, what = "amount"): bigint {
  if (typeof text !== "string") throw new Error(`${what}: expected a decimal string, got ${JSON.stringify(text)}`)
  const match = DECIMAL.exec(text)
  if (match === null) throw new Error(`${what}: ${JSON.stringify(text)} is not a major-unit decimal string`)
  return BigInt(match[1]!) * 1000n + BigInt((match[2] ?? "").padEnd(3, "0"))
}

/** 12300n → "12.300" (thousandths shown as they are: for reports, not for the wire). */
export function showMilli(value: bigint): string {
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(4, "0")
  return `${negative ? "-" : ""}${digits.slice(0, -3)}.${digits.slice(-3)}`
}
