/**
 * Reconciliation: what a money-moving call does when it cannot know whether a send took effect (a
 * timeout, a connection lost after sending, a transient HTTP status, an unreadable 2xx reply, an
 * abort). It never resends blindly; it asks `status` (with the call's own endpoint and timeouts) and
 * judges the order with `order-state`'s {@link judge}:
 *
 * - **Applied** → the call ends with a {@link Reconciled} result (the order matched the request);
 * - **Conflict** → {@link ReconcileConflict} naming the field that differs; nothing is resent;
 * - **Unchanged** → {@link NotApplied}: for an order-creating call at once (a resend under the same
 *   `client_orderid` is deduped by the gateway); for a call on an existing order only once the
 *   order stayed unchanged for the whole processing window (`settleMs` after the send), since the
 *   gateway does not dedupe captures or returns;
 * - **Pending** (a new capture/return still processing) → polled until its amount shows;
 * - no proof within the call's deadline (or after an abort) → {@link OutcomeUnknown}.
 *
 * @packageDocumentation
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { isTransient, OutcomeUnknown, ReconcileConflict, type AuthenticationError, type CallError, type GatewayValidationError, type StatusSnapshot } from "../errors"
import type { PreparedOperation, Reconciled, StatusReply } from "../operations/table"
import { judge, type Verdict } from "./order-state"

/** The status lookup the pipeline provides. */
export type StatusLookup = (query: { client_orderid: string; orderid?: string }) => Effect.Effect<StatusReply, CallError>

/** Internal: the order provably does not show this call; sending it (again) is safe. */
export class NotApplied extends Data.TaggedError("NotApplied")<{
  /** `_tag` of the failure that made the outcome unknown. */
  readonly cause: string
  /** `true` when the order stayed unchanged for the whole processing window. */
  readonly settled: boolean
  /** The order as last seen. */
  readonly statusAfter: StatusSnapshot | undefined
}> {}

/** Everything reconciliation needs about one call. */
export interface ReconcileContext {
  readonly op: PreparedOperation
  readonly values: Readonly<Record<string, string>>
  readonly key: string
  /** The order before the first send (calls on an existing order), else `undefined`. */
  readonly before: StatusSnapshot | undefined
  /** `status` with the call's endpoint and timeouts: one attempt (reconciliation polls itself). */
  readonly lookupOnce: StatusLookup
  /** `status` with the call's endpoint, timeouts and read retries. */
  readonly lookup: StatusLookup
  /** How long an unchanged order must stay unchanged after a send before it proves nothing landed. */
  readonly settleMs: number
  /** Interval between status polls while waiting. */
  readonly pollIntervalMs: number
  /** The call's deadline (Effect clock, ms). */
  readonly deadlineAt: number
  /** `true` once the caller's signal fired: one look at `status`, no waiting. */
  readonly aborted: () => boolean
  /** When the call's first send started (Effect clock, ms), once one has; `order-not-found` proves nothing long after it. */
  readonly sentAt?: (() => number | undefined) | undefined
  /** How long after the last send `order-not-found` still proves the call never landed (see `ReconcilePolicy`). */
  readonly notFoundProvesWithinMs?: number | undefined
}

/** The `status` query for the call's order. */
export function statusQuery(op: PreparedOperation, values: Readonly<Record<string, string>>): { client_orderid: string; orderid?: string } | undefined {
  const clientOrderId = op.clientOrderIdField === undefined ? undefined : values[op.clientOrderIdField]
  if (clientOrderId === undefined) return undefined
  const orderid = values["orderid"]
  return orderid === undefined ? { client_orderid: clientOrderId } : { client_orderid: clientOrderId, orderid }
}

type Observation = { readonly _tag: "Seen"; readonly verdict: Verdict } | { readonly _tag: "Failed"; readonly error: CallError | undefined }

function observe(ctx: ReconcileContext, lookup: StatusLookup): Effect.Effect<Observation> {
  const query = statusQuery(ctx.op, ctx.values)
  // No merchant order id to ask by: nothing can be proven.
  if (query === undefined) return Effect.succeed({ _tag: "Failed", error: undefined })
  return lookup(query).pipe(
    Effect.map((reply): Observation => ({ _tag: "Seen", verdict: judge(ctx.op.id, ctx.values, ctx.before, reply as unknown as StatusSnapshot) })),
    Effect.catchAll((error): Effect.Effect<Observation> =>
      error._tag === "GatewayValidationError" && error.errorCode === "order-not-found"
        ? Effect.map(Clock.currentTimeMillis, (now): Observation =>
          notFoundProves(ctx, now) ? { _tag: "Seen", verdict: judge(ctx.op.id, ctx.values, ctx.before, undefined) } : { _tag: "Failed", error })
        : Effect.succeed({ _tag: "Failed", error })
    )
  )
}

/**
 * Whether `order-not-found` proves the call never landed: only less than `notFoundProvesWithinMs`
 * after its first send started (an order made by it would be that old at most: later, the gateway
 * may have forgotten a paid order; 0: never).
 */
function notFoundProves(ctx: Pick<ReconcileContext, "sentAt" | "notFoundProvesWithinMs">, now: number): boolean {
  const sentAt = ctx.sentAt?.()
  return sentAt === undefined || ctx.notFoundProvesWithinMs === undefined || now - sentAt < ctx.notFoundProvesWithinMs
}

function reconciled(ctx: ReconcileContext, after: StatusSnapshot, cause: string): Reconciled {
  const reply = after as unknown as StatusReply
  return {
    type: "reconciled",
    status: reply.status,
    "paynet-order-id": reply["paynet-order-id"],
    "merchant-order-id": reply["merchant-order-id"],
    statusReply: reply,
    statusBefore: ctx.before as StatusReply | undefined,
    reason: cause,
    idempotencyKey: ctx.key
  }
}

/** The error for "no proof": what the caller may do next depends on what was seen. */
export function unknownOutcome(ctx: ReconcileContext, cause: string, statusAfter: StatusSnapshot | undefined, mayHaveApplied: boolean, pending = false): OutcomeUnknown {
  const query = statusQuery(ctx.op, ctx.values)
  const next = !mayHaveApplied
    ? "nothing was applied: call again with the same idempotencyKey (or client_orderid) to send it"
    : pending
    ? "the gateway shows a matching transaction still processing: wait with awaitFinal, do not send again"
    : "do not send it under a new key: call again with the same idempotencyKey later (it reconciles before sending), or read status/awaitFinal"
  return new OutcomeUnknown({
    operation: ctx.op.method,
    client_orderid: query?.client_orderid ?? "",
    orderid: query?.orderid ?? (statusAfter?.["paynet-order-id"] as string | undefined),
    lastError: cause,
    mayHaveApplied,
    statusBefore: ctx.before,
    statusAfter,
    next,
    idempotencyKey: ctx.key
  })
}

/** What {@link takenOverUnknown}, {@link siblingUnknown} and {@link interruptedUnknown} read of a call's intent. */
export interface UnknownIntent {
  readonly key: string
  readonly before?: StatusSnapshot | undefined
  readonly lastError?: string | undefined
}

function unproven(op: PreparedOperation, values: Readonly<Record<string, string>>, key: string, lastError: string, statusBefore: StatusSnapshot | undefined, next: string): OutcomeUnknown {
  return new OutcomeUnknown({
    operation: op.method, client_orderid: statusQuery(op, values)?.client_orderid ?? "", orderid: values["orderid"], lastError,
    mayHaveApplied: true, statusBefore, statusAfter: undefined, idempotencyKey: key, next
  })
}

/**
 * A resumed call that ended before it proved anything (its deadline or signal while it waited for
 * its order or its proof): an earlier send under its key may still have landed.
 */
export function stillUnknown(op: PreparedOperation, values: Readonly<Record<string, string>>, intent: UnknownIntent, cause: string): OutcomeUnknown {
  return unproven(op, values, intent.key, cause, intent.before,
    "an earlier send under this idempotencyKey may have landed and nothing proved otherwise: call again with the same key later (it reconciles before sending)")
}

/** A resumed call another instance sent and left unknown, with the order before that send lost: nothing can prove it did not land. */
export function takenOverUnknown(op: PreparedOperation, values: Readonly<Record<string, string>>, key: string): OutcomeUnknown {
  return unproven(op, values, key, "TakenOver", undefined,
    "another instance sent this call and stopped before its outcome was known: compare status with your own records before sending it again")
}

/**
 * Another money call of this client on the same order was out while this one's outcome was unknown
 * (`in-flight`), or was sent after it became unknown (`sent-after`): the order's figures cannot tell
 * the two apart.
 */
export function siblingUnknown(op: PreparedOperation, values: Readonly<Record<string, string>>, intent: UnknownIntent, when: "in-flight" | "sent-after"): OutcomeUnknown {
  const sibling = when === "in-flight"
    ? "another money call of this client on this order was in flight while this one's outcome was unknown"
    : "another money call of this client on this order sent after this one's outcome became unknown"
  return unproven(op, values, intent.key, intent.lastError ?? "unknown", intent.before,
    `${sibling}, so the order's figures cannot tell the two apart: compare status (its transactions) with your own records before sending this again`)
}

/** A call interrupted after its request was sent. */
export function interruptedUnknown(op: PreparedOperation, values: Readonly<Record<string, string>>, intent: UnknownIntent): OutcomeUnknown {
  return unproven(op, values, intent.key, "Interrupted", intent.before, "call again with the same idempotencyKey: it reconciles before sending")
}

function toConflict(ctx: ReconcileContext, v: Extract<Verdict, { _tag: "Conflict" }>): ReconcileConflict {
  return new ReconcileConflict({
    operation: ctx.op.method,
    client_orderid: statusQuery(ctx.op, ctx.values)?.client_orderid ?? "",
    orderid: v.after["paynet-order-id"] as string | undefined,
    field: v.field,
    expected: v.expected,
    found: v.found,
    statusAfter: v.after,
    idempotencyKey: ctx.key
  })
}

/** One look at `status` (with read retries): the order-creating path, where "not found" allows a resend at once. */
export function reconcileOnce(ctx: ReconcileContext, cause: string): Effect.Effect<Reconciled, NotApplied | OutcomeUnknown | ReconcileConflict> {
  return Effect.flatMap(observe(ctx, ctx.lookup), (o): Effect.Effect<Reconciled, NotApplied | OutcomeUnknown | ReconcileConflict> => {
    if (o._tag === "Failed") return Effect.fail(unknownOutcome(ctx, cause, undefined, true))
    const v = o.verdict
    switch (v._tag) {
      case "Applied":
      case "Pending":
        return Effect.succeed(reconciled(ctx, v.after, cause))
      case "Conflict":
        return Effect.fail(toConflict(ctx, v))
      case "Unchanged":
        return Effect.fail(new NotApplied({ cause, settled: false, statusAfter: v.after }))
    }
  }).pipe(Effect.withSpan("paykit.reconcile", { attributes: { operation: ctx.op.id, cause, mode: "once", client_orderid: statusQuery(ctx.op, ctx.values)?.client_orderid ?? "" } }))
}

/**
 * Polls `status` until the call is proven applied, proven not applied (unchanged for `settleMs`
 * after `since`), or the deadline passes. After an abort or a passed deadline it looks once.
 */
export function settle(ctx: ReconcileContext, cause: string, since: number): Effect.Effect<Reconciled, NotApplied | OutcomeUnknown | ReconcileConflict> {
  const loop = (last: StatusSnapshot | undefined, pending: boolean): Effect.Effect<Reconciled, NotApplied | OutcomeUnknown | ReconcileConflict> =>
    Effect.gen(function*() {
      const o = yield* observe(ctx, ctx.lookupOnce)
      const now = yield* Clock.currentTimeMillis
      let seen = last
      let isPending = pending
      if (o._tag === "Failed") {
        if (o.error !== undefined && !isTransient(o.error)) return yield* Effect.fail(unknownOutcome(ctx, cause, seen, true))
      } else {
        const v = o.verdict
        seen = v.after ?? seen
        switch (v._tag) {
          case "Applied":
            return reconciled(ctx, v.after, cause)
          case "Conflict":
            return yield* Effect.fail(toConflict(ctx, v))
          case "Unchanged":
            if (now - since >= ctx.settleMs) return yield* Effect.fail(new NotApplied({ cause, settled: true, statusAfter: v.after }))
            break
          case "Pending":
            isPending = true
        }
      }
      if (ctx.aborted() || now + ctx.pollIntervalMs > ctx.deadlineAt) {
        return yield* Effect.fail(unknownOutcome(ctx, cause, seen, true, isPending))
      }
      yield* Effect.sleep(Duration.millis(ctx.pollIntervalMs))
      return yield* loop(seen, isPending)
    })
  return loop(undefined, false).pipe(Effect.withSpan("paykit.reconcile", { attributes: { operation: ctx.op.id, cause, mode: "settle", client_orderid: statusQuery(ctx.op, ctx.values)?.client_orderid ?? "" } }))
}

/**
 * A resend after an unknown outcome that the gateway refused. A refusal of the resend says nothing
 * about the earlier send: a lifecycle one (`threeds-state`, `payout-already-paid`,
 * `capture-exceeds-authorized`, ...) most likely means it landed, since `status` does not show every
 * step (a 3-D Secure method-URL upload leaves it as it was); an authentication one (credentials
 * rotated, a stale OAuth timestamp) or a validation one decides nothing about it. The answer is that
 * the outcome is unknown, never the bare refusal (which reads as "it did not happen").
 */
export function refusedAfterUnknown(ctx: ReconcileContext, cause: string, refusal: GatewayValidationError | AuthenticationError): OutcomeUnknown {
  const query = statusQuery(ctx.op, ctx.values)
  return new OutcomeUnknown({
    operation: ctx.op.method,
    client_orderid: query?.client_orderid ?? "",
    orderid: query?.orderid,
    lastError: `${cause}, then the resend was refused (${refusal._tag} ${refusal.errorCode})`,
    mayHaveApplied: true,
    statusBefore: ctx.before,
    statusAfter: undefined,
    next: refusal._tag === "GatewayValidationError" && refusal.category === "lifecycle"
      ? "the gateway refused the resend as not fitting the order's state: the earlier send most likely landed; read status or awaitFinal, do not send it under a new key"
      : "the gateway refused the resend; the earlier send may still have landed: fix the refusal, then call again with the same idempotencyKey (it reconciles before sending)",
    idempotencyKey: ctx.key
  })
}
