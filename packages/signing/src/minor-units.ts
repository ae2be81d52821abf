import { data as iso4217 } from "currency-codes"
import { InvalidAmountError, UnknownCurrencyError } from "./errors"

/**
 * Codes ISO 4217 lists with minor unit "N.A." (precious metals, bond-market units, SDR, testing and
 * "no currency"). `currency-codes` flattens "N.A." to 0, which would silently accept "1.000" XAU
 * as 1; an amount in these has no defined minor unit, so they are refused instead. A test checks
 * this list against the ISO XML the package ships.
 */
export const NO_MINOR_UNIT_CODES: ReadonlySet<string> = new Set([
  "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX"
])

// Built once: `currency-codes`' own lookup is a linear scan that upper-cases its input, and an
// exact-case Map keeps "usd" from passing as an ISO code.
const exponents: ReadonlyMap<string, number> = new Map(
  iso4217.filter((c) => !NO_MINOR_UNIT_CODES.has(c.code)).map((c) => [c.code, c.digits])
)

/**
 * The ISO 4217 minor-unit exponent of an alphabetic currency code (JPY 0, USD 2, KWD 3, CLF 4).
 *
 * @throws {UnknownCurrencyError} when the code is not an uppercase ISO 4217 code with a minor unit.
 */
export function currencyExponent(currency: string): number {
  const exponent = exponents.get(currency)
  if (exponent !== undefined) return exponent
  throw new UnknownCurrencyError(
    String(currency),
    NO_MINOR_UNIT_CODES.has(currency) ? "no-minor-unit" : "not-iso-4217"
  )
}

// JavaScript's `$` (without the `m` flag) matches only at the very end, so "10\n" is rejected.
const AMOUNT = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/**
 * Converts a decimal amount in major units, as sent in the form body, to the integer string of
 * minor units the control digest carries: `"10.5"` USD → `"1050"`, `"10.00"` JPY → `"10"`,
 * `"0.05"` GBP → `"5"`, `"0.00"` → `"0"`. Exact for any length: pure string arithmetic, no floats.
 *
 * The amount must match `^(0|[1-9][0-9]*)(\.[0-9]+)?$` over the whole string. Fraction digits past
 * the exponent are accepted only when all are zeros; anything else is an error, never a rounding.
 *
 * @throws {InvalidAmountError} when the amount is not a string, breaks the pattern, or has
 *   non-zero digits beyond the exponent.
 * @throws {UnknownCurrencyError} when the currency has no ISO 4217 exponent.
 */
export function toMinorUnits(amount: string, currency: string): string {
  const exponent = currencyExponent(currency)
  if (typeof amount !== "string") throw new InvalidAmountError("not-a-string", currency)
  const match = AMOUNT.exec(amount)
  if (match === null) throw new InvalidAmountError("pattern", currency)
  const whole = match[1] as string
  let fraction = match[2] ?? ""
  if (fraction.length > exponent) {
    for (let i = exponent; i < fraction.length; i++) {
      if (fraction.charCodeAt(i) !== 48) throw new InvalidAmountError("precision", currency)
    }
    fraction = fraction.slice(0, exponent)
  } else if (fraction.length < exponent) {
    fraction = fraction.padEnd(exponent, "0")
  }
  if (whole !== "0") return whole + fraction
  // Only a zero whole part can lead with zeros ("0.05" → "005"); strip them, keeping one "0".
  let i = 0
  while (i < fraction.length - 1 && fraction.charCodeAt(i) === 48) i++
  return fraction.length === 0 ? "0" : fraction.slice(i)
}
