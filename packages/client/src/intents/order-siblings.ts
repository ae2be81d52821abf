/**
 * Whether another intent on the same order may have moved the order's figures after an intent's
 * snapshot. A call on an existing order proves its outcome by comparing the order with its
 * snapshot; when a sibling call (another key, another instance) may have moved money on the order
 * since, the figures mix the two calls' money (a sibling's equal return reads as this one's) and
 * prove nothing. `recover()` then leaves the intent unresolved and a take-over answers
 * `OutcomeUnknown`.
 *
 * @packageDocumentation
 */
import { preparedOperations } from "../operations/table"
import type { Intent } from "../store/types"
import { NOTHING_MOVED } from "./verdicts"


/**
 * Whether `other` (another intent on the same order) may have moved the order's figures after
 * `intent`'s snapshot: then the figures mix the two calls' money and prove nothing about `intent`
 * (a sibling's equal return would read as the crashed one's).
 */
export function movedSince(intent: Intent, other: Intent): boolean {
  if (other.idempotencyKey === intent.idempotencyKey) return false
  const op = (preparedOperations as Record<string, { readonly onExistingOrder: boolean } | undefined>)[other.operation]
  if (op?.onExistingOrder !== true) return false
  if (other.orderid !== undefined && intent.orderid !== undefined && other.orderid !== intent.orderid) return false
  if (other.outcome?._tag === "Failed" && NOTHING_MOVED.has(other.outcome.errorTag)) return false
  // Finished before this intent was recorded (so before its snapshot): its money is in the snapshot.
  // Strictly before: the store's times are whole milliseconds, and a sibling that finished in the
  // same millisecond as this intent's record may have finished after its snapshot.
  return !(other.finishedAt !== undefined && other.finishedAt < intent.createdAt)
}

/** Whether any of `others` (the intents of `intent`'s order) may have moved its figures since its snapshot. */
export function siblingMoved(intent: Intent, others: ReadonlyArray<Intent>): boolean {
  return others.some((other) => movedSince(intent, other))
}
