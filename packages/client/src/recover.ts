/**
 * `recover()`: settles intents a crashed or hung instance left unfinished in the shared store, by
 * asking `status` — the store's `unfinished` hands each intent to one claimer across the fleet.
 *
 * An order-creating intent is settled from `status` by its `client_orderid`: an order matching its
 * amount and currency → its outcome is recorded as returned; `order-not-found` after the intent's
 * lease → it never landed (and a resend under the same `client_orderid` is deduped by the gateway).
 * An intent on an existing order (capture, return, void, ...) cannot be proven from `status` alone
 * without the order as it was before the send, which the store does not keep: it is reported as
 * unresolved for a person (or the merchant's own records) to decide.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import { Effect, Either } from "effect"
import type { CallError, StatusSnapshot } from "./errors"
import { preparedOperations, type StatusReply } from "./operations"
import { judge } from "./order-state"
import type { PayStoreService } from "./store/service"
import type { JsonValue, StoreError, StoreInputError } from "./store/types"

/** Options of `recover()`. */
export interface RecoverOptions {
  /** Only intents at least this old (default 60 000 ms). */
  readonly olderThanMs?: number | undefined
  /** How long this run holds each intent it claims (default 60 000 ms). */
  readonly leaseMs?: number | undefined
  /** At most this many per run (default 100). */
  readonly limit?: number | undefined
}

/** What a `recover()` run did. */
export interface RecoverReport {
  /** Unfinished intents this run claimed. */
  readonly claimed: number
  /** Settled from `status`: found and recorded as returned. */
  readonly applied: number
  /** Settled from `status`: the gateway has no such order. */
  readonly notApplied: number
  /** Still unknown (status failing, or an existing-order call that status cannot prove). */
  readonly unresolved: number
}

/** Runs one recovery pass. `status` asks with the intent's endpoint. */
export function recover(
  store: PayStoreService,
  status: (query: { client_orderid: string }, endpoint: string) => Effect.Effect<StatusReply, CallError>,
  options: RecoverOptions = {}
): Effect.Effect<RecoverReport, StoreError | StoreInputError> {
  return Effect.gen(function*() {
    const intents = yield* store.unfinished({ leaseMs: options.leaseMs ?? 60_000, olderThanMs: options.olderThanMs ?? 60_000, limit: options.limit ?? 100 })
    let applied = 0
    let notApplied = 0
    let unresolved = 0
    for (const intent of intents) {
      const op = (preparedOperations as Record<string, (typeof preparedOperations)[OperationId] | undefined>)[intent.operation]
      if (op === undefined || op.onExistingOrder || intent.client_orderid === "") {
        unresolved++
        continue
      }
      const reply = yield* Effect.either(status({ client_orderid: intent.client_orderid }, intent.endpoint))
      if (Either.isLeft(reply)) {
        if (reply.left._tag === "GatewayValidationError" && reply.left.errorCode === "order-not-found") {
          yield* store.recordOutcome(intent.idempotencyKey, { _tag: "Failed", errorTag: "NotApplied" })
          notApplied++
        } else unresolved++
        continue
      }
      const values: Record<string, string> = {}
      if (intent.amount !== undefined) values["amount"] = intent.amount
      if (intent.currency !== undefined) values["currency"] = intent.currency
      const verdict = judge(op.id, values, undefined, reply.right as unknown as StatusSnapshot)
      if (verdict._tag === "Applied") {
        yield* store.recordOutcome(intent.idempotencyKey, {
          _tag: "Returned",
          status: reply.right.status,
          orderid: reply.right["paynet-order-id"],
          data: JSON.parse(JSON.stringify({ type: "reconciled", status: reply.right.status, "paynet-order-id": reply.right["paynet-order-id"], "merchant-order-id": reply.right["merchant-order-id"], statusReply: reply.right, reason: "recover", idempotencyKey: intent.idempotencyKey })) as JsonValue
        })
        applied++
      } else {
        if (verdict._tag === "Conflict") yield* store.recordOutcome(intent.idempotencyKey, { _tag: "Failed", errorTag: "ReconcileConflict", orderid: reply.right["paynet-order-id"] })
        unresolved += verdict._tag === "Conflict" ? 0 : 1
      }
    }
    return { claimed: intents.length, applied, notApplied, unresolved }
  }).pipe(Effect.withSpan("paykit.recover"))
}
