/**
 * The fetches of money calls, by idempotency key, until each fetch itself returns (this process
 * only). An abort or a timeout ends an attempt for us, not its fetch: until that fetch returns the
 * request may still be on its way (a fetch that ignores its signal, an in-process gateway), and an
 * unchanged order proves nothing. A call's processing window therefore starts when the key's last
 * fetch returned.
 *
 * @packageDocumentation
 */
import { Clock, Duration, Effect, Option } from "effect"

/** Tracks each key's last fetch and tells when it ended. */
export interface KeyedFetches {
  /**
   * Remembers a fetch starting now as the key's last one; the returned function is called when
   * that fetch itself settles (however the attempt ended).
   */
  start(key: string): () => void
  /**
   * When the processing window of a call that became unknown at `since` starts: `since`, or later
   * when the key's fetch was still out and returned while we waited. `+Infinity` when we stopped
   * waiting first (the caller's signal, the deadline): then the window never closes, and settling
   * answers OutcomeUnknown with mayHaveApplied, never "not applied".
   */
  ended(key: string | undefined, signal: AbortSignal | undefined, deadlineAt: number, since: number): Effect.Effect<number>
}

/** A fresh tracker (one per client). */
export function makeKeyedFetches(): KeyedFetches {
  // Plain records rather than promise chains: almost every fetch returns before anyone asks.
  interface Pending {
    returned: boolean
    waiters: Array<() => void> | undefined
  }
  const inFlight = new Map<string, Pending>()
  return {
    start(key) {
      const pending: Pending = { returned: false, waiters: undefined }
      inFlight.set(key, pending)
      return () => {
        if (pending.returned) return
        pending.returned = true
        if (inFlight.get(key) === pending) inFlight.delete(key)
        if (pending.waiters !== undefined) for (const waiter of pending.waiters) waiter()
      }
    },
    ended(key, signal, deadlineAt, since) {
      const pending = key === undefined ? undefined : inFlight.get(key)
      if (pending === undefined) return Effect.succeed(since)
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
        if (pending.returned) onReturn()
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
