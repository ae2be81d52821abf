/**
 * Retries for the pipeline: the policy's `Schedule`, and a retry loop that builds nothing until
 * the first attempt has failed.
 *
 * @packageDocumentation
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { RetryPolicy } from "../config"

/** The retry schedule of a policy: exponential from `baseDelayMs`, capped at `maxDelayMs`, full jitter, `maxRetries` times. */
export function retrySchedule(policy: RetryPolicy): Schedule.Schedule<unknown, unknown> {
  const capped = Schedule.exponential(Duration.millis(policy.baseDelayMs), 2).pipe(
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(policy.maxDelayMs)))
  )
  // jitteredWith draws from Effect's Random service (seedable in tests), never Math.random.
  const jittered = policy.jitter ? Schedule.jitteredWith(capped, { min: 0, max: 1 }) : capped
  return Schedule.intersect(jittered, Schedule.recurs(policy.maxRetries)) as Schedule.Schedule<unknown, unknown>
}

/**
 * `Effect.retry(self, { schedule, while })` with the same decisions, delays and random draws, but
 * the schedule's driver (a `Ref`, the `while` wrapper, per-iteration metadata) is made only when
 * the first attempt fails: on the hot path almost every call succeeds at once, and building the
 * driver cost as much as the rest of the call's Effect plumbing. `schedule` is a thunk for the same
 * reason (a per-call policy override builds its schedule only when it is needed). `first` is the
 * first attempt when it differs from the retries: an attempt that already happened outside the
 * Effect (the pipeline's Promise-native first attempt), handed over as its result.
 */
export function retryLazily<A, E>(
  self: Effect.Effect<A, E>,
  schedule: () => Schedule.Schedule<unknown, unknown>,
  retryWhile: (error: E) => boolean | Effect.Effect<boolean>,
  firstAttempt: Effect.Effect<A, E> = self
): Effect.Effect<A, E> {
  return Effect.catchAll(firstAttempt, (first) => {
    // As Effect.retry does: the schedule steps first (drawing its jitter), then `while` decides.
    const policy = Schedule.whileInputEffect(schedule() as Schedule.Schedule<unknown, E>, (error: E) => {
      const decision = retryWhile(error)
      return typeof decision === "boolean" ? Effect.succeed(decision) : decision
    })
    return Effect.flatMap(Schedule.driver(policy), (driver) => {
      const loop = (error: E): Effect.Effect<A, E> =>
        Effect.matchEffect(driver.next(error), {
          onFailure: () => Effect.fail(error),
          onSuccess: () => Effect.catchAll(self, loop)
        })
      return loop(first)
    })
  })
}
