/**
 * A call's answer as the model reads it: what it says about the money of its key.
 *
 * @packageDocumentation
 */
import type { VerdictKind } from "./book"

/** How a call ended: its result, or the error it failed with. */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

/** What an answer says, by its `_tag`; `undefined` for an answer a money call must never give. */
export function classify(outcome: Outcome): VerdictKind | undefined {
  if (outcome.ok) return "applied"
  const e = outcome.error as { _tag?: string; mayHaveApplied?: boolean; mayHaveReachedGateway?: boolean }
  switch (e?._tag) {
    case "OutcomeUnknown":
      return e.mayHaveApplied === false ? "notApplied" : "unknown"
    case "ReconcileConflict":
      return "conflict"
    // A refusal of this call's send (a refusal after an unknown outcome is an OutcomeUnknown).
    case "GatewayValidationError":
      return "notApplied"
    // Refused before sending: nothing was sent. The transient failures are here too: a money call
    // whose send may have landed never ends with one (it reconciles), so one means the call failed
    // before its send (its read of the order, say).
    case "Cancelled":
    case "StoreError":
    case "StoreInputError":
    case "InputError":
    case "TransportError":
    case "Timeout":
    case "GatewayServerError":
    case "DecodeError":
      return "nothingSent"
    default:
      return undefined
  }
}

/** An answer in a word, for the log. */
export const describe = (outcome: Outcome): string => {
  if (outcome.ok) return "success"
  const e = outcome.error as { _tag?: string; message?: string }
  return e?._tag ?? `defect ${String(e?.message ?? e)}`
}

