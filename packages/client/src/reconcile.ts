/**
 * Reconciliation: what a money-moving call does when it cannot know whether its send took effect
 * (a timeout, a connection lost after sending, a 500).
 *
 * It never resends blindly. It asks `status` by `client_orderid` (and `orderid` when the request
 * names one):
 * - the gateway knows the order → the call ends with a {@link Reconciled} result carrying the
 *   status reply. For operations on an existing order (capture, return, void, create-card-ref,
 *   payout-pay, 3DS uploads) this is always the case: the order exists whether or not our request
 *   landed, and `status` cannot prove that this particular capture/return did not happen, so a
 *   resend could apply it twice. The caller reads the status reply (`captured-amount`,
 *   `returned-amount`, `status`) and decides.
 * - the gateway answers `order-not-found` → it provably has no such order, so the pipeline resends
 *   with the SAME `client_orderid` (which the gateway dedupes, so even a request still in flight
 *   cannot produce a second charge).
 * - `status` itself fails → {@link OutcomeUnknown}: nobody knows; do not resend, ask again later.
 *
 * @packageDocumentation
 */
import { Effect } from "effect"
import { GatewayValidationError, OutcomeUnknown, type CallError } from "./errors"
import type { PreparedOperation, Reconciled, StatusReply } from "./operations"

/** What `status` said about an order whose creation outcome was unknown. */
export type Reconciliation =
  | { readonly _tag: "Found"; readonly result: Reconciled }
  | { readonly _tag: "NotFound"; readonly error: GatewayValidationError }
  | { readonly _tag: "Inconclusive"; readonly error: OutcomeUnknown }

/** The status lookup the pipeline provides (itself retried as a read). */
export type StatusLookup = (query: { client_orderid: string; orderid?: string }) => Effect.Effect<StatusReply, CallError>

/** `true` when a failure leaves the outcome of a send unknown. */
export function outcomeUnknown(error: CallError): boolean {
  switch (error._tag) {
    case "Timeout":
    case "GatewayServerError":
      return true
    case "TransportError":
      return error.mayHaveReachedGateway
    default:
      return false
  }
}

/** Asks `status` about the order a request with unknown outcome was about. */
export function reconcile(
  op: PreparedOperation,
  values: Readonly<Record<string, string>>,
  cause: CallError,
  lookup: StatusLookup
): Effect.Effect<Reconciliation> {
  const clientOrderId = op.clientOrderIdField === undefined ? undefined : values[op.clientOrderIdField]
  const orderid = values["orderid"]
  if (clientOrderId === undefined) {
    return Effect.succeed({
      _tag: "Inconclusive",
      error: new OutcomeUnknown({ operation: op.method, client_orderid: "", orderid, lastError: cause._tag })
    })
  }
  const query = orderid === undefined ? { client_orderid: clientOrderId } : { client_orderid: clientOrderId, orderid }
  return lookup(query).pipe(
    Effect.map((reply): Reconciliation => ({
      _tag: "Found",
      result: {
        type: "reconciled",
        status: reply.status,
        "paynet-order-id": reply["paynet-order-id"],
        "merchant-order-id": reply["merchant-order-id"],
        statusReply: reply,
        reason: cause._tag
      }
    })),
    Effect.catchAll((error): Effect.Effect<Reconciliation> =>
      Effect.succeed(
        error._tag === "GatewayValidationError" && error.errorCode === "order-not-found"
          ? { _tag: "NotFound", error }
          : {
            _tag: "Inconclusive",
            error: new OutcomeUnknown({ operation: op.method, client_orderid: clientOrderId, orderid, lastError: cause._tag })
          }
      )
    ),
    Effect.withSpan("paykit.reconcile", { attributes: { operation: op.id, client_orderid: clientOrderId, cause: cause._tag } })
  )
}
