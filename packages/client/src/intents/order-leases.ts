/**
 * Order leases across a fleet (docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet): a call on an existing order holds
 * the order's lease in the shared store from its snapshot to its proof, whichever instance makes it,
 * so no other call's money lands inside its before/after comparison. Inside one process the order
 * lock (`intents/order-locks.ts`) queues the calls first, so only one of them asks the store.
 *
 * The lease lasts the call's deadline plus its processing window. A call that ends with its outcome
 * proven gives the order back at once; one whose outcome stayed unknown keeps it until the lease runs
 * out (its send may still land), except for the next call with its own key, which re-enters it.
 * Waiting for the order counts against the call's deadline and ends with its signal: `Cancelled`,
 * nothing sent.
 *
 * @packageDocumentation
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { Cancelled } from "../errors"
import type { OrderIntent, OrderLocks, OrderWait } from "./order-locks"
import type { PayStoreService } from "../store/service"

/** How often a call waiting for an order another instance holds asks again (ms). */
const POLL_MS = 50

// Whether a call ended with an outcome that may still land (its order stays held).
const mayStillLand = (exit: Exit.Exit<unknown, unknown>): boolean => {
  if (Exit.isSuccess(exit)) return false
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause)) as { readonly _tag?: string; readonly mayHaveApplied?: boolean } | undefined
  return failure === undefined || (failure._tag === "OutcomeUnknown" && failure.mayHaveApplied === true)
}

/** The order locks of a client over a store: `local` first (this process), then the store's lease. */
export function storeOrderLocks(store: PayStoreService, local: OrderLocks): OrderLocks {
  const leased = <A, E>(orderid: string, wait: OrderWait, intent: OrderIntent, run: Effect.Effect<A, E>): Effect.Effect<A, E | Cancelled> => {
    const cancelled = (reason: "deadline" | "signal") => new Cancelled({ operation: wait.operation, reason, idempotencyKey: wait.idempotencyKey })
    const take = (): Effect.Effect<number, Cancelled> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (wait.signal?.aborted === true) return Effect.fail(cancelled("signal"))
        const left = wait.deadlineAt - now
        if (left <= 0) return Effect.fail(cancelled("deadline"))
        const leaseMs = Math.max(1, Math.ceil(left + (intent.windowMs ?? 0)))
        return store.takeOrderLease(orderid, { idempotencyKey: intent.key, leaseMs }).pipe(
          // A store that fails or does not answer by the deadline: nothing was sent, the call ends.
          Effect.timeoutFail({ duration: Duration.millis(Math.max(1, left)), onTimeout: () => cancelled("deadline") }),
          Effect.catchTags({ StoreError: () => Effect.fail(cancelled("deadline")), StoreInputError: () => Effect.fail(cancelled("deadline")) }),
          Effect.flatMap((r) =>
            r._tag === "Taken"
              ? Effect.succeed(r.token)
              : Effect.zipRight(Effect.sleep(Duration.millis(Math.max(1, Math.min(POLL_MS, r.leaseUntil - now, left)))), Effect.suspend(take)))
        )
      })
    return Effect.flatMap(take(), (token) =>
      run.pipe(
        Effect.onExit((exit) =>
          mayStillLand(exit)
            ? Effect.void
            // Given back behind the caller's answer: a slow store never holds the call up.
            : Effect.asVoid(Effect.forkDaemon(Effect.ignore(store.releaseOrderLease(orderid, { idempotencyKey: intent.key, token })))))
      ))
  }
  return {
    movedSince: local.movedSince,
    withOrder: (orderid, wait, intent, sent, run) => local.withOrder(orderid, wait, intent, sent, leased(orderid, wait, intent, run))
  }
}
