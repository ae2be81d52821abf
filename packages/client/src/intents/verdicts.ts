/**
 * How a money call's recorded end decides what its key does next (docs/fleet.md#the-intent-protocol):
 * a success replays; a failure after which the call provably moved nothing re-opens the key (the next
 * call with it sends, tracked like the first); any other failure (a conflict found after a send, a
 * reply that did not decode) is final and replays, because money may have moved and only a person
 * can say how much.
 *
 * @packageDocumentation
 */
import { DecodeError, OutcomeUnknown, ReconcileConflict, type ReconcileError } from "../errors"

/**
 * Failure tags after which a call provably moved nothing: a refusal, a failure before sending, a
 * transport error before the gateway was reached, an order proven unchanged (`NotApplied`, or an
 * `OutcomeUnknown` recorded with `mayHaveApplied: false`; one that may have applied is never
 * recorded as an outcome), a store that failed before the send (a store failure after a send whose
 * outcome is unknown ends the call with the proof or `OutcomeUnknown`, never with the store's error).
 */
export const NOTHING_MOVED: ReadonlySet<string> = new Set([
  "NotApplied", "GatewayValidationError", "AuthenticationError", "InputError", "Cancelled", "TransportError", "MissingPrivateKey", "OutcomeUnknown",
  "StoreError", "StoreInputError"
])

/**
 * The failure tag of an intent `recover()` recorded as unknown for good: the gateway answered
 * `order-not-found` too long after the key's first send for the answer to prove the send never
 * landed (it may have forgotten a paid order). Not a tag after which nothing moved: the key never
 * re-opens, and replays `OutcomeUnknown` for a person to settle.
 */
export const NOT_FOUND_UNPROVEN = "OrderNotFoundUnproven"

/** Whether a call that ended with the failure `tag` re-opens its key (nothing moved) instead of replaying it. */
export function reopens(tag: string): boolean {
  return NOTHING_MOVED.has(tag)
}

/** What a recorded final failure replays as, from its tag and the fields recorded with it. */
export function replayedFailure(
  tag: string,
  data: unknown,
  call: { readonly operation: string; readonly client_orderid: string; readonly orderid?: string | undefined; readonly idempotencyKey: string }
): ReconcileError {
  const fields = typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {}
  const text = (name: string): string | undefined => (typeof fields[name] === "string" ? (fields[name] as string) : undefined)
  const field = text("field")
  if (tag === "ReconcileConflict" && (field === "amount" || field === "currency" || field === "transaction-type")) {
    return new ReconcileConflict({
      operation: call.operation, client_orderid: call.client_orderid, orderid: text("orderid") ?? call.orderid,
      field, expected: text("expected") ?? "", found: text("found") ?? "", idempotencyKey: call.idempotencyKey
    })
  }
  if (tag === "DecodeError" && typeof fields["httpStatus"] === "number") {
    return new DecodeError({ operation: call.operation, httpStatus: fields["httpStatus"], issue: text("issue") ?? "", idempotencyKey: call.idempotencyKey })
  }
  const next = tag === NOT_FOUND_UNPROVEN
    ? "the gateway answered order-not-found too long after this key's first send to prove it never landed (it forgets old orders, paid ones too): settle it from the gateway's back office or the callbacks you recorded; do not send it under a new key"
    : undefined
  return new OutcomeUnknown({
    operation: call.operation, client_orderid: call.client_orderid, orderid: call.orderid, lastError: tag, mayHaveApplied: true,
    statusBefore: undefined, statusAfter: undefined, idempotencyKey: call.idempotencyKey,
    next: next ?? `this key's call ended with ${tag} after it was sent, and money may have moved: read status or awaitFinal and settle it; do not send it under a new key`
  })
}

/** The fields a final failure is recorded with, so that its replay says the same (`replayedFailure`). */
export function recordedFields(error: { readonly _tag: string }): Record<string, string | number> | undefined {
  const e = error as unknown as Record<string, unknown>
  if (error._tag === "ReconcileConflict") {
    const out: Record<string, string | number> = {}
    for (const k of ["field", "expected", "found", "orderid"]) if (typeof e[k] === "string") out[k] = e[k] as string
    return out
  }
  if (error._tag === "DecodeError" && typeof e["httpStatus"] === "number") return { httpStatus: e["httpStatus"] as number, issue: String(e["issue"] ?? "") }
  return undefined
}
