/**
 * A control digest with its parts: which value each field of the scheme contributes, the amount
 * as it enters the digest, and the control itself. Every digest and amount conversion is
 * `@paykit/signing`'s; the parts are then digested again through `controlDigest` and must give the
 * same control, so what `paykit explain` shows is what was signed.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts/operations"
import { controlDigest, controlSchemeOf, currencyExponent, signControl, type OperationControlOptions } from "@paykit/signing"
import { Redacted } from "./effect-free"
import type { OAuthExplanation } from "./oauth"
import { CheckFailed, UsageError } from "./errors"
import { amountInDigest, type MinorUnitsMode } from "./minor-units"
import { signingInputError } from "./signing-errors"

/** One field's contribution to the digest input. */
export interface ControlPart {
  /** The scheme's field name (`endpointId` is the path parameter). */
  readonly field: string
  /** The value as given (`undefined` when it was not given). */
  readonly given: string | undefined
  /** The text the field adds to the digest input ("" when absent). */
  readonly inDigest: string
  /** Why `inDigest` differs from `given`, if it does. */
  readonly note?: string
}

/** A control digest and how it was made. */
export interface ControlExplanation {
  /** The operation signed. */
  readonly operationId: OperationId
  /** Always `control` here (OAuth operations give an {@link OAuthExplanation}). */
  readonly scheme: "control"
  /** C1–C8. */
  readonly code: string
  /** The parts in digest order; the control key follows them (never shown). */
  readonly parts: ReadonlyArray<ControlPart>
  /** The concatenation of the parts, without the key. */
  readonly concatenationWithoutKey: string
  /** Lowercase hex SHA-1. */
  readonly control: string
  /** The mode the amount was scaled in, when the scheme has an amount. */
  readonly minorUnits: MinorUnitsMode | undefined
}

/** Inputs of {@link explainControl} besides the form values. */
export interface ControlInputs {
  /** The merchant control key. */
  readonly key: Redacted.Redacted<string>
  /** The URL's endpoint (or group) id; needed by C2 and C6. */
  readonly endpointId: string | undefined
  /** How `amount` enters the digest. */
  readonly minorUnits: MinorUnitsMode
}

/**
 * Signs and explains the `control` of a control-signed operation.
 *
 * @throws {UsageError} for an input that cannot be signed (bad amount or currency, missing
 *   `--endpoint-id`), naming the field and the rule.
 */
export function explainControl(operationId: OperationId, values: Readonly<Record<string, string>>, inputs: ControlInputs): ControlExplanation {
  const scheme = controlSchemeOf(operationId)
  const currency = values["currency"]
  const hasAmount = scheme.fields.includes("amount") && values["amount"] !== undefined
  const parts: Array<ControlPart> = []
  try {
    if (hasAmount && currency !== undefined) {
      currencyExponent(currency) // an unknown currency is the caller's error, reported first
    }
    for (const field of scheme.fields) {
      if (field === "endpointId") {
        if (inputs.endpointId === undefined) {
          throw new UsageError({ argument: "--endpoint-id", rule: `the control of ${operationId} (${scheme.code}) includes the endpoint id; give --endpoint-id N` })
        }
        parts.push({ field, given: inputs.endpointId, inDigest: inputs.endpointId, note: "the URL's endpoint id (--endpoint-id)" })
        continue
      }
      const given = values[field]
      if (given === undefined) {
        parts.push({ field, given, inDigest: "", note: "not given: adds nothing" })
      } else if (field === "amount") {
        if (currency === undefined) throw new UsageError({ argument: "currency", rule: "needed to scale amount into minor units; give currency=XXX" })
        const minor = amountInDigest(given, currency, inputs.minorUnits)
        parts.push({ field, given, inDigest: minor, note: `minor units (${inputs.minorUnits}: ${given} ${currency} → ${minor})` })
      } else {
        parts.push({ field, given, inDigest: given })
      }
    }
    const options: OperationControlOptions & { readonly minorUnits: MinorUnitsMode } = {
      key: Redacted.value(inputs.key),
      minorUnits: inputs.minorUnits,
      ...(inputs.endpointId === undefined ? {} : { endpointId: inputs.endpointId })
    }
    const control = signControl(operationId, values, options)
    const again = controlDigest(
      { code: scheme.code, fields: parts.map((_, i) => `part${i}`) },
      Object.fromEntries(parts.map((p, i) => [`part${i}`, p.inDigest])),
      Redacted.value(inputs.key)
    )
    if (again !== control) {
      throw new CheckFailed({ reason: `the explained parts do not digest to the control @paykit/signing computed for ${operationId}; the signing package's minor-units parameter may have another name` })
    }
    return {
      operationId,
      scheme: "control",
      code: scheme.code,
      parts,
      concatenationWithoutKey: parts.map((p) => p.inDigest).join(""),
      control,
      minorUnits: scheme.fields.includes("amount") ? inputs.minorUnits : undefined
    }
  } catch (error) {
    throw signingInputError(error, { minorUnits: inputs.minorUnits })
  }
}
