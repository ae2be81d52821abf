/**
 * The minor-units mode (docs/decisions.md#2-amounts-in-cents): `cents` (amount × 100 for every currency, the default)
 * or `iso4217` (× 10^exponent of the currency). `@paykit/signing` takes the mode as a parameter;
 * this module is the one place that passes it.
 *
 * @packageDocumentation
 */
import { minorUnitsExponent, type MinorUnits } from "@paykit/signing"

/** How the digest scales `amount`. */
export type MinorUnitsMode = MinorUnits

/** The modes, the default first. */
export const MINOR_UNITS_MODES: ReadonlyArray<MinorUnitsMode> = ["cents", "iso4217"]

/** How many fraction digits `mode` keeps for `currency` (2 in cents mode). */
export function scaleOf(currency: string, mode: MinorUnitsMode): number {
  return minorUnitsExponent(currency, { minorUnits: mode })
}
