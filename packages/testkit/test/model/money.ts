/**
 * Decimal strings ⇄ cents for the reference model (USD only: exponent 2). Written apart from the
 * simulator on purpose: the model must not share the code it judges.
 */

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,2}))?$/

/** "12.30" → 1230n; anything else throws (a malformed amount in a reply is a finding). */
export function cents(text: unknown, what = "amount"): bigint {
  if (typeof text !== "string") throw new Error(`${what}: expected a decimal string, got ${JSON.stringify(text)}`)
  const match = DECIMAL.exec(text)
  if (match === null) throw new Error(`${what}: ${JSON.stringify(text)} is not a major-unit decimal string`)
  return BigInt(match[1]!) * 100n + BigInt((match[2] ?? "").padEnd(2, "0"))
}

/** 1230n → "12.30". */
export function major(value: bigint): string {
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(3, "0")
  return `${negative ? "-" : ""}${digits.slice(0, -2)}.${digits.slice(-2)}`
}
