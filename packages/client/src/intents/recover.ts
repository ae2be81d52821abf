/**
 * `recover()`: settles intents a crashed or hung instance left unfinished in the shared store, by
 * asking `status` — the store's `unfinished` hands each intent to one claimer across the fleet.
 *
 * An order-creating intent is settled from `status` by its `client_orderid`: an order matching its
 * amount and currency → its outcome is recorded as returned; `order-not-found` once the processing
 * window after its last send has passed, and within `notFoundProvesWithinMs` of its first send → it
 * never landed. Later than that, the gateway may have forgotten a paid order, and no later answer can
 * tell the two apart: the intent is recorded as a final unknown (`OrderNotFoundUnproven`, counted
 * in `unknown`), for a person to settle; the key replays `OutcomeUnknown` and never sends again.
 *
 * An intent on an existing order (capture, return, void, ...) stays unresolved when another intent
 * on the order may have moved its figures since its snapshot (the two calls' money cannot be told
 * apart); otherwise it is settled like the in-process
 * reconciliation does it, from the order as it was before the send, which the client records with
 * the intent before sending (`recordBefore`): a new matching transaction or amount → applied; the
 * order unchanged once the processing window (`settleMs` from the intent's creation) has passed →
 * not applied; a new transaction still processing → left for the next run. Every window runs from
 * the intent's `sendsEndBy` (when its last send ended), never from its creation. An intent that promised
 * a snapshot (`beforeRequired`) and has none was never sent → not applied. Only an intent written
 * by a client that kept no snapshot (before migration 2) is left unresolved for a person to decide.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CallError, StatusSnapshot } from "../errors"
import { preparedOperations, type StatusReply } from "../operations/table"
import { siblingMoved } from "./order-siblings"
import { NOT_FOUND_UNPROVEN, recordedFields } from "./verdicts"
import { judge } from "./order-state"
import type { PayStoreService } from "../store/service"
import type { Intent, JsonValue, StoreError, StoreInputError } from "../store/types"

/** Options of `recover()`. */
export interface RecoverOptions {
  /** Only intents at least this old (default 60 000 ms). */
  readonly olderThanMs?: number | undefined
  /** How long this run holds each intent it claims (default 60 000 ms). */
  readonly leaseMs?: number | undefined
  /** At most this many per run (default 100). */
  readonly limit?: number | undefined
  /**
   * How long after an intent's last send an unchanged order proves the call did not land (default
   * 30 000 ms, the client's default processing window).
   */
  readonly settleMs?: number | undefined
  /**
   * How long after an intent's last send `order-not-found` still proves the call never landed
   * (default 600 000 ms; keep it below how long the gateway keeps final orders).
   */
  readonly notFoundProvesWithinMs?: number | undefined
}

/** What a `recover()` run did. */
export interface RecoverReport {
  /** Unfinished intents this run claimed. */
  readonly claimed: number
  /** Settled from `status`: found and recorded as returned. */
  readonly applied: number
  /** Settled from `status` (or from a snapshot never taken): the call never landed. */
  readonly notApplied: number
  /** Still unknown (status failing, a transaction still processing, or no snapshot to compare with). */
  readonly unresolved: number
  /**
   * Unknown for good, recorded as final for a person to settle: `order-not-found` later than
   * `notFoundProvesWithinMs` after the intent's first send (the gateway may have forgotten a paid
   * order). Its key replays `OutcomeUnknown` and never sends again; the store records it as
   * `Failed` with the tag `OrderNotFoundUnproven`.
   */
  readonly unknown: number
}


/** The `status` lookup `recover()` uses: by the intent's order, on the intent's endpoint. */
export type RecoverStatus = (query: { client_orderid: string; orderid?: string }, endpoint: string) => Effect.Effect<StatusReply, CallError>

type Settled = "applied" | "notApplied" | "unresolved" | "conflict" | "unknown"

const reconciledData = (intent: Intent, reply: StatusReply): JsonValue =>
  JSON.parse(JSON.stringify({
    type: "reconciled",
    status: reply.status,
    "paynet-order-id": reply["paynet-order-id"],
    "merchant-order-id": reply["merchant-order-id"],
    statusReply: reply,
    statusBefore: intent.before,
    reason: "recover",
    idempotencyKey: intent.idempotencyKey
  })) as JsonValue

/** Settles one claimed intent; records an outcome only when `status` proves one. */
function settleOne(store: PayStoreService, status: RecoverStatus, intent: Intent, settleMs: number, notFoundProvesWithinMs: number): Effect.Effect<Settled, StoreError | StoreInputError> {
  return Effect.gen(function*() {
    const op = (preparedOperations as Record<string, (typeof preparedOperations)[OperationId] | undefined>)[intent.operation]
    if (op === undefined || intent.client_orderid === "") return "unresolved"
    // Written with this run's fencing token: a holder that took the intent over since wins.
    const holder = { attempt: intent.attempts }
    const notApplied = Effect.as(store.recordOutcome(intent.idempotencyKey, { _tag: "Failed", errorTag: "NotApplied" }, holder), "notApplied" as const)
    // When the intent's last send ended (an intent written before migration 3: when it was recorded).
    const sendsEnded = intent.sendsEndBy ?? intent.createdAt
    if (op.onExistingOrder) {
      // Promised a snapshot before its send and left none: the send never happened.
      if (intent.before === undefined) return intent.beforeRequired === true ? yield* notApplied : "unresolved"
      const siblings = yield* store.intentsOfOrder(intent.client_orderid)
      if (siblingMoved(intent, siblings)) return "unresolved"
    }
    const query = op.onExistingOrder && intent.orderid !== undefined
      ? { client_orderid: intent.client_orderid, orderid: intent.orderid }
      : { client_orderid: intent.client_orderid }
    const reply = yield* Effect.either(status(query, intent.endpoint))
    const notFound = Either.isLeft(reply) && reply.left._tag === "GatewayValidationError" && reply.left.errorCode === "order-not-found"
    if (Either.isLeft(reply) && !notFound) return "unresolved"
    if (notFound) {
      // A send may still land inside its window; long after it, the gateway may have forgotten a paid order.
      const now = yield* Clock.currentTimeMillis
      // The window runs from the last send's end; the gateway's memory from the first send's start
      // (an order it made is at most that old).
      if (now - sendsEnded < settleMs) return "unresolved"
      if (now - intent.createdAt >= notFoundProvesWithinMs) {
        // Too late to prove anything, now and at any later run (the answer only gets older): a
        // person settles it. Final, so the key replays OutcomeUnknown instead of sending again,
        // and no run claims it again.
        yield* store.recordOutcome(intent.idempotencyKey, {
          _tag: "Failed",
          errorTag: NOT_FOUND_UNPROVEN,
          data: { errorCode: "order-not-found", firstSendAt: intent.createdAt, askedAt: now, notFoundProvesWithinMs }
        }, holder)
        yield* Effect.logWarning("recover(): order-not-found too long after the first send to prove the send never landed; recorded as unknown for a person to settle").pipe(
          Effect.annotateLogs({ idempotencyKey: intent.idempotencyKey, client_orderid: intent.client_orderid, operation: intent.operation })
        )
        return "unknown"
      }
    }
    const after = Either.isRight(reply) ? reply.right : undefined
    const values: Record<string, string> = {}
    if (intent.amount !== undefined) values["amount"] = intent.amount
    if (intent.currency !== undefined) values["currency"] = intent.currency
    const verdict = judge(op.id, values, op.onExistingOrder ? intent.before : undefined, after as unknown as StatusSnapshot | undefined)
    switch (verdict._tag) {
      case "Applied":
        yield* store.recordOutcome(intent.idempotencyKey, {
          _tag: "Returned",
          status: after!.status,
          orderid: after!["paynet-order-id"],
          data: reconciledData(intent, after!)
        }, holder)
        return "applied"
      case "Conflict":
        // Final: the key replays the conflict (money may have moved), it never re-opens.
        yield* store.recordOutcome(intent.idempotencyKey, { _tag: "Failed", errorTag: "ReconcileConflict", orderid: after?.["paynet-order-id"], data: recordedFields({ ...verdict, _tag: "ReconcileConflict" }) }, holder)
        return "conflict"
      case "Pending":
        // A new transaction of this call's type is still processing: the next run sees its amount.
        return "unresolved"
      case "Unchanged": {
        if (!op.onExistingOrder) return yield* notApplied
        // The gateway does not dedupe captures or returns: only an order unchanged for the whole
        // processing window after the send proves it did not land.
        const now = yield* Clock.currentTimeMillis
        return now - sendsEnded >= settleMs && after !== undefined ? yield* notApplied : "unresolved"
      }
    }
  })
}

/** Runs one recovery pass. `status` asks with the intent's endpoint. */
export function recover(store: PayStoreService, status: RecoverStatus, options: RecoverOptions = {}): Effect.Effect<RecoverReport, StoreError | StoreInputError> {
  return Effect.gen(function*() {
    const intents = yield* store.unfinished({ leaseMs: options.leaseMs ?? 60_000, olderThanMs: options.olderThanMs ?? 60_000, limit: options.limit ?? 100 })
    const counts = { applied: 0, notApplied: 0, unresolved: 0, conflict: 0, unknown: 0 }
    for (const intent of intents) {
      const settled = yield* settleOne(store, status, intent, options.settleMs ?? 30_000, options.notFoundProvesWithinMs ?? 600_000)
      counts[settled]++
      // Unresolved: given back at once, so the next call with its key proves it without waiting for this run's lease.
      if (settled === "unresolved") yield* Effect.ignore(store.releaseIntent(intent.idempotencyKey, { attempt: intent.attempts }))
    }
    // A conflict (the order contradicts the intent) is recorded as such and counted in `claimed` only.
    return { claimed: intents.length, applied: counts.applied, notApplied: counts.notApplied, unresolved: counts.unresolved, unknown: counts.unknown }
  }).pipe(Effect.withSpan("paykit.recover"))
}
