/**
 * Turns the signing package's typed errors into a {@link UsageError} that names the field and the
 * rule in the words of the command line. Signing errors never carry a key or a card number, and
 * neither do these.
 *
 * @packageDocumentation
 */
import type { AnySigningError } from "@paykit/signing"
import { CheckFailed, UsageError } from "./errors"
import { scaleOf, type MinorUnitsMode } from "./minor-units"

const AMOUNT_PATTERN = "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"

/** The error to report for `error` (a UsageError or CheckFailed passes through unchanged). */
export function signingInputError(error: unknown, context: { readonly minorUnits?: MinorUnitsMode }): unknown {
  if (error instanceof UsageError || error instanceof CheckFailed) return error
  const tag = (error as { _tag?: unknown } | null)?._tag
  const e = error as AnySigningError
  switch (tag) {
    case "InvalidAmountError": {
      const amount = e as Extract<AnySigningError, { _tag: "InvalidAmountError" }>
      if (amount.rule === "precision") {
        const currency = amount.currency ?? "its currency"
        const mode = context.minorUnits ?? "cents"
        let digits = "the currency's exponent"
        try {
          digits = String(scaleOf(currency, mode))
        } catch {
          // unknown currency: keep the generic wording
        }
        return new UsageError({ argument: amount.field, rule: `has a non-zero digit beyond the ${digits} fraction digits that minor units (${mode}) keep for ${currency}; amounts are never rounded` })
      }
      return new UsageError({ argument: amount.field, rule: `must be a decimal string matching ${AMOUNT_PATTERN} (e.g. 10.42), in major units` })
    }
    case "UnknownCurrencyError":
      return new UsageError({ argument: "currency", rule: e.message.replace(/^currency /, "") })
    case "InvalidRequestError": {
      const req = e as Extract<AnySigningError, { _tag: "InvalidRequestError" }>
      const argument = req.field === "key" ? "--key" : req.field === "endpointId" ? "--endpoint-id" : req.field
      return new UsageError({ argument, rule: req.message.slice(req.field.length + 2) })
    }
    case "KeyFormatError":
    case "WeakKeyError":
      return new UsageError({ argument: "--private-key", rule: e.message })
    case "NotControlSignedError":
      return new UsageError({ argument: "OPERATION_ID", rule: e.message })
    default:
      return error
  }
}
