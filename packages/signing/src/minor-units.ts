import { data as iso4217 } from "currency-codes"
import { InvalidAmountError, InvalidRequestError, UnknownCurrencyError } from "./errors"

/**
 * How a decimal amount becomes the integer the control digest carries (docs/decisions.md#2-amounts-in-cents):
 *
 * - `"cents"` (the default): × 100 for every currency, as the interface says ("minor units (cents;
 *   ten units of currency is 1000)") and as the gateway's official libraries compute it:
 *   `"1000"` JPY → `"100000"`, `"10.500"` KWD → `"1050"`.
 * - `"iso4217"` (opt-in, per merchant): × 10^exponent of the currency (JPY 0, USD 2, KWD 3):
 *   `"1000"` JPY → `"1000"`, `"1.234"` KWD → `"1234"`.
 *
 * Both give the same result for a currency whose exponent is 2 (USD, EUR, ...).
 */
export type MinorUnits = "cents" | "iso4217"

/** The mode used when none is given: `"cents"`. */
export const DEFAULT_MINOR_UNITS: MinorUnits = "cents"

/** Selects the {@link MinorUnits} mode; every API that puts an amount into a digest takes it. */
export interface MinorUnitsOptions {
  /** `"cents"` (default) or `"iso4217"`. */
  readonly minorUnits?: MinorUnits
}

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

/**
 * Checks a mode given at run time (from configuration, say), so a typo fails loudly instead of
 * signing in a mode nobody chose.
 *
 * @throws {InvalidRequestError} (`minorUnits`, `invalid-value`) for anything but the two modes.
 */
export function minorUnitsMode(options: MinorUnitsOptions | undefined): MinorUnits {
  const mode = options?.minorUnits
  if (mode === undefined || mode === "cents") return "cents"
  if (mode === "iso4217") return "iso4217"
  throw new InvalidRequestError("minorUnits", "invalid-value", 'expected "cents" or "iso4217"')
}

/**
 * How many decimal places the digest's integer holds for `currency` in a mode: always 2 in
 * `cents`; the ISO 4217 exponent in `iso4217`. Use it to turn minor units back into a decimal.
 *
 * @example minorUnitsExponent("JPY") // → 2;  minorUnitsExponent("JPY", { minorUnits: "iso4217" }) // → 0
 * @throws {UnknownCurrencyError} in `iso4217` mode, when the currency has no ISO 4217 exponent.
 * @throws {InvalidRequestError} for an unknown mode.
 */
export function minorUnitsExponent(currency: string, options?: MinorUnitsOptions): number {
  return minorUnitsMode(options) === "cents" ? 2 : currencyExponent(currency)
}

// JavaScript's `$` (without the `m` flag) matches only at the very end, so "10\n" is rejected.
const AMOUNT = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/**
 * Converts a decimal amount in major units, as sent in the form body, to the integer string of
 * minor units the control digest carries. Exact for any length: pure string arithmetic, no floats.
 *
 * In `cents` (the default) the amount is × 100 whatever the currency (`"10.5"` USD → `"1050"`,
 * `"1000"` JPY → `"100000"`, `"10.500"` KWD → `"1050"`), and the currency is not consulted. In
 * `iso4217` it is × 10^exponent (`"10.00"` JPY → `"10"`, `"1.234"` KWD → `"1234"`).
 *
 * The amount must match `^(0|[1-9][0-9]*)(\.[0-9]+)?$` over the whole string. Fraction digits past
 * the scale (2, or the exponent) are accepted only when all are zeros; anything else is an error,
 * never a rounding.
 *
 * @throws {InvalidAmountError} when the amount is not a string, breaks the pattern, or has
 *   non-zero digits beyond the scale.
 * @throws {UnknownCurrencyError} in `iso4217` mode, when the currency has no ISO 4217 exponent.
 * @throws {InvalidRequestError} for an unknown mode.
 */
export function toMinorUnits(amount: string, currency: string, options?: MinorUnitsOptions): string {
  const mode = minorUnitsMode(options)
  const exponent = mode === "cents" ? 2 : currencyExponent(currency)
  if (typeof amount !== "string") throw new InvalidAmountError("not-a-string", currency, "amount", mode)
  const match = AMOUNT.exec(amount)
  if (match === null) throw new InvalidAmountError("pattern", currency, "amount", mode)
  const whole = match[1] as string
  let fraction = match[2] ?? ""
  if (fraction.length > exponent) {
    for (let i = exponent; i < fraction.length; i++) {
      if (fraction.charCodeAt(i) !== 48) throw new InvalidAmountError("precision", currency, "amount", mode)
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
