/**
 * A control digest with its parts: which value each field of the scheme contributes, the amount
 * as it enters the digest, and the control itself. The parts are `@paykit/signing`'s
 * `explainControl` (this module adds the CLI's notes and usage errors); they are then digested
 * again through `controlDigest` and must give the control `signControl` computed, so what
 * `paykit explain` shows is what was signed.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts/operations"
import { controlDigest, currencyExponent, explainControl as explainControlParts, signControl, type OperationControlOptions } from "@paykit/signing"
import { Redacted } from "./effect-free"
import type { OAuthExplanation } from "./oauth"
import { CheckFailed, UsageError } from "./errors"
import type { MinorUnitsMode } from "./minor-units"
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
  const x = explainControlParts(operationId, values, { endpointId: inputs.endpointId, minorUnits: inputs.minorUnits })
  const currency = values["currency"]
  const parts: Array<ControlPart> = []
  try {
    if (x.minorUnits !== undefined && values["amount"] !== undefined && currency !== undefined) {
      currencyExponent(currency) // an unknown currency is the caller's error, reported first
    }
    for (const part of x.parts) {
      const { field, given } = part
      if (part.source === "path") {
        if (given === undefined) {
          throw new UsageError({ argument: "--endpoint-id", rule: `the control of ${operationId} (${x.code}) includes the endpoint id; give --endpoint-id N` })
        }
        parts.push({ field, given, inDigest: part.inDigest, note: "the URL's endpoint id (--endpoint-id)" })
      } else if (given === undefined) {
        parts.push({ field, given, inDigest: "", note: "not given: adds nothing" })
      } else if (part.amount !== undefined) {
        if (!part.amount.ok) {
          if (part.amount.currency === undefined) throw new UsageError({ argument: "currency", rule: "needed to scale amount into minor units; give currency=XXX" })
          throw part.amount.error
        }
        parts.push({ field, given, inDigest: part.amount.minor, note: `minor units (${inputs.minorUnits}: ${given} ${part.amount.currency} → ${part.amount.minor})` })
      } else {
        parts.push({ field, given, inDigest: part.inDigest })
      }
    }
    const options: OperationControlOptions & { readonly minorUnits: MinorUnitsMode } = {
      key: Redacted.value(inputs.key),
      minorUnits: inputs.minorUnits,
      ...(inputs.endpointId === undefined ? {} : { endpointId: inputs.endpointId })
    }
    const control = signControl(operationId, values, options)
    const again = controlDigest(
      { code: x.code, fields: parts.map((_, i) => `part${i}`) },
      Object.fromEntries(parts.map((p, i) => [`part${i}`, p.inDigest])),
      Redacted.value(inputs.key)
    )
    if (again !== control) {
      throw new CheckFailed({ reason: `the explained parts do not digest to the control @paykit/signing computed for ${operationId}; the signing package's minor-units parameter may have another name` })
    }
    return {
      operationId,
      scheme: "control",
      code: x.code,
      parts,
      concatenationWithoutKey: x.concatenationWithoutKey,
      control,
      minorUnits: x.minorUnits
    }
  } catch (error) {
    throw signingInputError(error, { minorUnits: inputs.minorUnits })
  }
}
