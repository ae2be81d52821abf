/**
 * The fetches of money calls, by idempotency key, until each fetch itself returns (this process
 * only). An abort or a timeout ends an attempt for us, not its fetch: until that fetch returns the
 * request may still be on its way (a fetch that ignores its signal, an in-process gateway), and an
 * unchanged order proves nothing. A call's processing window therefore starts when the last of the
 * key's fetches returned (an earlier attempt's fetch may outlive a later attempt that failed fast).
 *
 * @packageDocumentation
 */
import { Clock, Duration, Effect, Option } from "effect"

/** Tracks each key's fetches still out and tells when the last of them ended. */
export interface KeyedFetches {
  /** Remembers `fetching` as one of the key's fetches until it settles. */
  track(key: string, fetching: Promise<unknown>): void
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
  // Every fetch of a key still out, not only the last: a request the gateway still holds from an
  // earlier attempt may land after a later attempt failed fast (refused, reset before sending).
  const inFlight = new Map<string, Set<Promise<void>>>()
  return {
    track(key, fetching) {
      const done = fetching.then(() => undefined, () => undefined)
      let out = inFlight.get(key)
      if (out === undefined) inFlight.set(key, out = new Set())
      out.add(done)
      void done.then(() => {
        out.delete(done)
        if (out.size === 0 && inFlight.get(key) === out) inFlight.delete(key)
      })
    },
    ended(key, signal, deadlineAt, since) {
      const out = key === undefined ? undefined : inFlight.get(key)
      if (out === undefined || out.size === 0) return Effect.succeed(since)
      const pending = Promise.all([...out])
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
        void pending.then(end(true))
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
