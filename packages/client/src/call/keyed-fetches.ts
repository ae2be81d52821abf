/**
 * The fetches of money calls, by idempotency key, until each fetch itself returns (this process
 * only). An abort or a timeout ends an attempt for us, not its fetch: until that fetch returns the
 * request may still be on its way (a fetch that ignores its signal, an in-process gateway), and an
 * unchanged order proves nothing. A call's processing window therefore starts when the last of the
 * key's fetches returned (an earlier attempt's fetch may outlive a later attempt that failed fast).
 *
 * @packageDocumentation
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** Tracks each key's fetches still out and tells when the last of them ended. */
export interface KeyedFetches {
  /**
   * Remembers a fetch starting now as one of the key's fetches; the returned function is called
   * when that fetch itself settles (however the attempt ended).
   */
  start(key: string, orderid?: string): () => void
  /** Whether a fetch of a call on `orderid` under another key than `key` is still out. */
  outOnOrder(orderid: string, key: string): boolean
  /**
   * When the processing window of a call that became unknown at `since` starts: `since`, or later
   * when some of the key's fetches were still out and the last of them returned while we waited. `+Infinity` when we stopped
   * waiting first (the caller's signal, the deadline): then the window never closes, and settling
   * answers OutcomeUnknown with mayHaveApplied, never "not applied".
   */
  ended(key: string | undefined, signal: AbortSignal | undefined, deadlineAt: number, since: number): Effect.Effect<number>
}

/** A fresh tracker (one per client). */
export function makeKeyedFetches(): KeyedFetches {
  // Every fetch of a key still out, not only the last: a request the gateway still holds from an
  // earlier attempt may land after a later attempt failed fast (refused, reset before sending).
  // Plain counters rather than promise chains: almost every fetch returns before anyone asks.
  interface Out {
    count: number
    waiters: Array<() => void> | undefined
  }
  const inFlight = new Map<string, Out>()
  // orderid → key → fetches out (calls on an existing order only).
  const byOrder = new Map<string, Map<string, number>>()
  const onOrder = (orderid: string, key: string, by: number) => {
    let keys = byOrder.get(orderid)
    if (keys === undefined) byOrder.set(orderid, keys = new Map())
    const n = (keys.get(key) ?? 0) + by
    if (n > 0) keys.set(key, n)
    else {
      keys.delete(key)
      if (keys.size === 0) byOrder.delete(orderid)
    }
  }
  return {
    outOnOrder(orderid, key) {
      const keys = byOrder.get(orderid)
      if (keys === undefined) return false
      for (const k of keys.keys()) if (k !== key) return true
      return false
    },
    start(key, orderid) {
      if (orderid !== undefined) onOrder(orderid, key, 1)
      let out = inFlight.get(key)
      if (out === undefined) inFlight.set(key, out = { count: 0, waiters: undefined })
      out.count++
      const mine = out
      let returned = false
      return () => {
        if (returned) return
        returned = true
        if (orderid !== undefined) onOrder(orderid, key, -1)
        if (--mine.count > 0) return
        if (inFlight.get(key) === mine) inFlight.delete(key)
        const waiters = mine.waiters
        mine.waiters = undefined
        if (waiters !== undefined) for (const waiter of waiters) waiter()
      }
    },
    ended(key, signal, deadlineAt, since) {
      const pending = key === undefined ? undefined : inFlight.get(key)
      if (pending === undefined || pending.count === 0) return Effect.succeed(since)
      if (signal?.aborted === true) return Effect.succeed(Number.POSITIVE_INFINITY)
      const returned = Effect.async<boolean>((resume) => {
        let over = false
        const end = (fetchReturned: boolean) => () => {
          if (over) return
          over = true
          signal?.removeEventListener("abort", onAbort)
          resume(Effect.succeed(fetchReturned))
        }
        const onAbort = end(false)
        signal?.addEventListener("abort", onAbort, { once: true })
        const onReturn = end(true)
        if (pending.count === 0) onReturn()
        else (pending.waiters ??= []).push(onReturn)
        return Effect.sync(() => {
          over = true
          signal?.removeEventListener("abort", onAbort)
        })
      })
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        returned.pipe(
          Effect.timeoutOption(Duration.millis(Math.max(0, deadlineAt - now))),
          Effect.flatMap((ended) =>
            Option.getOrElse(ended, () => false)
              ? Effect.map(Clock.currentTimeMillis, (at) => Math.max(since, at))
              : Effect.succeed(Number.POSITIVE_INFINITY))
        ))
    }
  }
}
