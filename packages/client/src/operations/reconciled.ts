/**
 * `isReconciled`: tells a money-moving call's {@link Reconciled} result from its own reply. A module
 * of its own, apart from the operation table's Schemas, so importing `@paykit/client` loads no
 * Schema (docs/decisions.md#22-packages-a-team-installs).
 *
 * @packageDocumentation
 */
import type { Reconciled } from "./table"

/**
 * Whether a money-moving call's result is {@link Reconciled} (its own reply was lost) rather than its
 * reply. A typed reply tells the two apart by its `type` literal already; a `request()` call's reply
 * is a record of strings, which this narrows.
 *
 * @example
 * const credit = await pay.request(loyaltyCredit)
 * if (isReconciled(credit)) show(credit.statusReply)
 * else show(credit["paynet-order-id"])
 */
export function isReconciled(result: unknown): result is Reconciled {
  return typeof result === "object" && result !== null && (result as { type?: unknown }).type === "reconciled" && "statusReply" in result
}
