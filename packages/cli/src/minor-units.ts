/**
 * The minor-units mode (DESIGN decision 2): `cents` (amount × 100 for every currency, the default)
 * or `iso4217` (× 10^exponent of the currency). `@paykit/signing` takes the mode as a parameter;
 * this module is the one place that passes it, and it checks that the installed signing package
 * honours it, so a version without the parameter can never silently sign in the wrong mode.
 *
 * @packageDocumentation
 */
import { currencyExponent, toMinorUnits } from "@paykit/signing"

/** How the digest scales `amount`. */
export type MinorUnitsMode = "cents" | "iso4217"

/** The modes, the default first. */
export const MINOR_UNITS_MODES: ReadonlyArray<MinorUnitsMode> = ["cents", "iso4217"]

/** The signing package's amount conversion with its mode parameter (its third argument). */
const toMinorWithMode = toMinorUnits as (amount: string, currency: string, minorUnits?: MinorUnitsMode) => string

/** Whether the installed `@paykit/signing` converts amounts in `mode` (probed on 1 JPY). */
export function signingHonoursMode(mode: MinorUnitsMode): boolean {
  try {
    return toMinorWithMode("1", "JPY", mode) === (mode === "cents" ? "100" : "1")
  } catch {
    return false
  }
}

/** The amount as it enters the digest, in `mode`, computed by `@paykit/signing`. */
export function amountInDigest(amount: string, currency: string, mode: MinorUnitsMode): string {
  return toMinorWithMode(amount, currency, mode)
}

/** How many fraction digits `mode` keeps for `currency` (2 in cents mode). */
export function scaleOf(currency: string, mode: MinorUnitsMode): number {
  return mode === "cents" ? 2 : currencyExponent(currency)
}

/** Whether the mode changes anything for `currency` (modes agree on exponent-2 currencies). */
export function modeMatters(currency: string): boolean {
  try {
    return currencyExponent(currency) !== 2
  } catch {
    return true
  }
}
