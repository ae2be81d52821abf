/**
 * A caller's `AbortSignal` as an Effect that fails when it fires: raced against a wait (a store's
 * answer, another call's outcome, an order's lease), it ends the wait with the call's own error.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"

/** Fails with `error()` once `signal` fires (at once when it already has): race it against a wait. */
export function whenAborted<E>(signal: AbortSignal, error: () => E): Effect.Effect<never, E> {
  return Effect.async<never, E>((resume) => {
    const fire = () => resume(Effect.fail(error()))
    if (signal.aborted) return void fire()
    signal.addEventListener("abort", fire, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", fire))
  })
}
