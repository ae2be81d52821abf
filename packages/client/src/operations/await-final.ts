/**
 * `awaitFinal`: polls `status` until the order reaches a final status (approved, declined,
 * filtered, error), on a schedule modelled on the gateway's own advice: every few seconds during
 * the first minutes, then every several minutes, up to a deadline (defaults 4 s for 5 min, then
 * 7.5 min, up to 1 h; tests use ms-scale values).
 *
 * A pending 3DS challenge or hosted form (`processing` with `redirect-to`) is not an error: by
 * default it is returned as `ActionRequired` so the caller can send the customer there, then call
 * `awaitFinal` again. Pass `stopOnRedirect: false` to keep waiting instead (e.g. when the customer
 * was already redirected). A final order reports its money `outcome` (voided, refunded, ...).
 *
 * @packageDocumentation
 */
import type { Status } from "@paykit/contracts"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { PollPolicy } from "../config"
import { AwaitFinalTimeout, Cancelled, InputError, isTransient, type CallError, type StatusSnapshot } from "../errors"
import type { StatusReply } from "./table"
import { moneyOutcome, type MoneyOutcome } from "../intents/order-state"
import type { StatusLookup } from "../intents/reconcile"

/** Which order to wait for. */
export interface AwaitFinalQuery {
  /** The merchant's order id. */
  readonly client_orderid: string
  /** The gateway's order id, when the call's reply gave one (`paynet-order-id`). */
  readonly orderid?: string | undefined
}

/** The statuses that end an order's processing. */
export type FinalStatus = Exclude<Status, "processing" | "unknown">

/** The final status reply, tagged, with what happened to the money. */
export type Final = StatusReply & {
  /** Discriminates `Final` from `ActionRequired`. */
  readonly _tag: "Final"
  /** The gateway's final status word of the order's last transaction: approved, declined, filtered or error. */
  readonly status: FinalStatus
  /**
   * What happened to the money: `approved`, `declined`, `filtered`, `error`, or — read from the
   * transaction type and amounts, where `status` alone would say `approved` — `voided`, `refunded`,
   * `partially-refunded`, `charged-back` (the order has a chargeback: `transaction-type`
   * `chargeback` while it is the last transaction, and `chargeback-amount`, docs/decisions.md#17-chargebacks).
   */
  readonly outcome: MoneyOutcome
}

/** The order waits for the customer at `redirectTo` (3DS challenge or hosted form). */
export type ActionRequired = StatusReply & {
  /** Discriminates `ActionRequired` from `Final`. */
  readonly _tag: "ActionRequired"
  /** Where to send the customer (the ACS or hosted-form URL). */
  readonly redirectTo: string
  /** The gateway's auto-submitting form to the issuer, when it sent one beside `redirect-to` (show it as is). */
  readonly html?: string | undefined
}

/** What `awaitFinal` resolves to. */
export type AwaitFinalResult = Final | ActionRequired

/** Failures of `awaitFinal`: the deadline passed, `status` failed with a non-transient error, or the signal fired. */
export type AwaitFinalError = AwaitFinalTimeout | CallError | Cancelled

/** `awaitFinal`'s policy overrides, plus a signal that stops the wait (`Cancelled`). */
export type AwaitFinalOptions = Partial<PollPolicy> & {
  /** Stops waiting (nothing is sent by `awaitFinal`, so stopping is always safe). */
  readonly signal?: AbortSignal | undefined
}

/** Fails with `Cancelled` when the signal fires. */
function whenAborted(signal: AbortSignal): Effect.Effect<never, Cancelled> {
  return Effect.async<never, Cancelled>((resume) => {
    const fire = () => resume(Effect.fail(new Cancelled({ operation: "awaitFinal", reason: "signal" })))
    if (signal.aborted) fire()
    else signal.addEventListener("abort", fire, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", fire))
  })
}

const FINAL: ReadonlySet<string> = new Set(["approved", "declined", "filtered", "error"])

/** `true` for approved, declined, filtered and error. */
export function isFinalStatus(status: string): status is FinalStatus {
  return FINAL.has(status)
}

const POSITIVE: ReadonlyArray<keyof PollPolicy> = ["fastIntervalMs", "slowIntervalMs", "deadlineMs"]
const AT_LEAST_ZERO: ReadonlyArray<keyof PollPolicy> = ["fastPhaseMs", "unknownGraceMs"]

// A NaN deadline never passes (every comparison with it is false) and a 0 interval polls in a tight
// loop: a policy figure that breaks its rule is an InputError naming it, before any poll.
function checkPolicy(policy: PollPolicy): InputError | undefined {
  for (const field of POSITIVE) {
    const v = policy[field]
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) return new InputError({ operation: "awaitFinal", field, rule: "must be a finite number of milliseconds above 0" })
  }
  for (const field of AT_LEAST_ZERO) {
    const v = policy[field]
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return new InputError({ operation: "awaitFinal", field, rule: "must be a finite number, 0 or more" })
  }
  return undefined
}

/**
 * Polls until final, redirect, or deadline. The gateway's `unknown` (it lost track of the order)
 * is polled for at most `unknownGraceMs` from the first `unknown` in a row, then ends the wait with
 * `AwaitFinalTimeout { reason: "unknown-status", lastStatus: "unknown" }` (docs/decisions.md#d9u-the-unknown-status): it is never
 * reported as final, since nobody knows where the money is, and never polled until the deadline.
 */
export function awaitFinal(
  lookup: StatusLookup,
  query: AwaitFinalQuery,
  policy: PollPolicy,
  signal?: AbortSignal
): Effect.Effect<AwaitFinalResult, AwaitFinalError> {
  const invalid = checkPolicy(policy)
  if (invalid !== undefined) return Effect.fail(invalid)
  const q = query.orderid === undefined
    ? { client_orderid: query.client_orderid }
    : { client_orderid: query.client_orderid, orderid: query.orderid }
  const wait = Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    let lastStatus: string | undefined
    let lastError: CallError | undefined
    let unknownSince: number | undefined
    while (true) {
      const result = yield* Effect.either(lookup(q))
      const now = yield* Clock.currentTimeMillis
      if (result._tag === "Left") {
        // A flaky network is no reason to give up waiting; a refusal (auth, not found) is.
        if (!isTransient(result.left)) return yield* Effect.fail(result.left)
        lastError = result.left
      } else {
        const reply = result.right
        lastStatus = reply.status
        if (isFinalStatus(reply.status)) {
          return { ...reply, _tag: "Final", status: reply.status, outcome: moneyOutcome(reply as unknown as StatusSnapshot) } as Final
        }
        const redirect = reply["redirect-to"]
        if (policy.stopOnRedirect && redirect !== undefined && redirect !== "") {
          return { ...reply, _tag: "ActionRequired", redirectTo: redirect, html: reply.html } as ActionRequired
        }
        unknownSince = reply.status === "unknown" ? (unknownSince ?? now) : undefined
      }
      const elapsed = now - start
      const interval = elapsed < policy.fastPhaseMs ? policy.fastIntervalMs : policy.slowIntervalMs
      const unknownTooLong = unknownSince !== undefined && now - unknownSince + interval > policy.unknownGraceMs
      if (elapsed + interval > policy.deadlineMs || unknownTooLong) {
        return yield* Effect.fail(new AwaitFinalTimeout({
          client_orderid: query.client_orderid,
          orderid: query.orderid,
          lastStatus,
          statusReached: lastStatus !== undefined,
          lastError,
          waitedMs: elapsed,
          ...(unknownTooLong ? { reason: "unknown-status" as const, unknownForMs: now - unknownSince! } : { reason: "deadline" as const })
        }))
      }
      yield* Effect.sleep(Duration.millis(interval))
    }
  })
  return (signal === undefined ? wait : Effect.raceFirst(wait, whenAborted(signal))).pipe(
    Effect.withSpan("paykit.awaitFinal", { attributes: { client_orderid: query.client_orderid } })
  )
}
