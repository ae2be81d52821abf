/**
 * One money call at a time per order, within one client. A call on an existing order proves its
 * outcome by comparing the order before its send with the order after; a second call on the same
 * order whose send falls between those two looks would be counted as this call's (a capture
 * answered 500 and never processed read "applied" from its sibling's equal capture; two captures of
 * different amounts read each other's as a conflict). The gateway processes an order's follow-ups
 * one after another anyway, so this client runs them that way: from its snapshot to its proof, a
 * call holds its order. Waiting for the order counts against the call's deadline and ends with its
 * signal: `Cancelled`, nothing sent.
 *
 * Each call also notes, when it ends, how many sends this client had made on its order: a call
 * whose outcome stayed unknown and is resumed after another call sent on the order can no longer
 * tell its own money from the other's in the order's figures ({@link OrderLocks.movedSince}).
 *
 * This is the memory store's implementation of the rule (docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet);
 * over a shared store, `store/order-leases.ts` adds the store's order lease behind it, so the rule
 * holds across a fleet.
 *
 * @packageDocumentation
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { whenAborted } from "../transport/when-aborted"
import { Cancelled } from "../errors"

/** What an order lock reads and notes on a call's intent (the ledger's `CallIntent` is one). */
export interface OrderIntent {
  /** The call's idempotency key (it holds the order under it). */
  readonly key: string
  /** The call's processing window (ms): an order's lease in a store covers it beyond the deadline. */
  readonly windowMs?: number | undefined
  /** How many sends this client had made on the order when the call last ended (see {@link OrderLocks.movedSince}). */
  orderSends?: { readonly track: { sends: number }; readonly at: number } | undefined
}

/** What bounds a wait for an order: the call's deadline (Effect clock, ms) and signal. */
export interface OrderWait {
  readonly operation: string
  readonly idempotencyKey: string
  readonly deadlineAt: number
  readonly signal: AbortSignal | undefined
}

/** Runs effects one at a time per order. */
export interface OrderLocks {
  /**
   * Runs `effect` once no other call holds `orderid` (or fails with `Cancelled` when the wait ends
   * first); when it ends, counts a send on the order if `sent()` and notes the count on `intent`.
   */
  readonly withOrder: <A, E>(orderid: string, wait: OrderWait, intent: OrderIntent, sent: () => boolean, effect: Effect.Effect<A, E>) => Effect.Effect<A, E | Cancelled>
  /** Whether a call on `orderid` sent since `intent` last ended (or that cannot be told any more). */
  readonly movedSince: (orderid: string, intent: OrderIntent) => boolean
}

/** A fresh set of order locks (one per client). */
export function makeOrderLocks(): OrderLocks {
  // Only orders with a call running or waiting have an entry.
  const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  // Sends per order by any call of this client. Bounded: a forgotten order reads as "moved since"
  // (OutcomeUnknown), never as proof.
  const sends = new Map<string, { sends: number }>()
  const sendsOn = (orderid: string) => {
    let track = sends.get(orderid)
    if (track === undefined) {
      sends.set(orderid, track = { sends: 0 })
      if (sends.size > 100_000) sends.delete(sends.keys().next().value!)
    }
    return track
  }
  return {
    movedSince: (orderid, intent) => {
      const noted = intent.orderSends
      return noted !== undefined && (sends.get(orderid) !== noted.track || noted.track.sends !== noted.at)
    },
    withOrder: (orderid, wait, intent, sent, run) =>
      Effect.suspend(() => {
        let entry = locks.get(orderid)
        if (entry === undefined) locks.set(orderid, entry = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 })
        entry.users++
        const held = entry
        const leave = Effect.sync(() => {
          if (--held.users === 0 && locks.get(orderid) === held) locks.delete(orderid)
        })
        const cancelled = (reason: "deadline" | "signal") => new Cancelled({ operation: wait.operation, reason, idempotencyKey: wait.idempotencyKey })
        const take = Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const bounded = held.semaphore.take(1).pipe(
            Effect.timeoutFail({ duration: Duration.millis(Math.max(0, wait.deadlineAt - now)), onTimeout: () => cancelled("deadline") })
          )
          return wait.signal === undefined ? bounded : Effect.raceFirst(bounded, whenAborted(wait.signal, () => cancelled("signal")))
        })
        // Uncontended: take the permit at once, no timer.
        const acquire = held.users === 1 ? held.semaphore.take(1) : take
        const note = Effect.sync(() => {
          const track = sendsOn(orderid)
          if (sent()) track.sends++
          intent.orderSends = { track, at: track.sends }
        })
        return Effect.uninterruptibleMask((restore) =>
          restore(acquire).pipe(
            Effect.flatMap(() => restore(run).pipe(Effect.ensuring(Effect.zipRight(note, held.semaphore.release(1))))),
            Effect.ensuring(leave)
          ))
      })
  }
}
