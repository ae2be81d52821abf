/**
 * Running an Effect for a Promise caller: the Promise facade and the pipeline's Promise-native
 * calls reject with the typed failure itself, never a FiberFailure.
 *
 * @packageDocumentation
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/** Runs an Effect; rejects with its typed failure (not a FiberFailure). */
export function runToPromise<A, E>(effect: Effect.Effect<A, E>): Promise<A> {
  return Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    throw Option.isSome(failure) ? failure.value : Cause.squash(exit.cause)
  })
}
