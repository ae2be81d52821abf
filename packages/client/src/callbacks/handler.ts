/**
 * The callback endpoint: a web-standard `Request → Response` handler that verifies, claims,
 * confirms and hands off, so the merchant's code runs once per distinct callback and sees only
 * what the gateway's state confirms.
 *
 * 1. verify the `control` (403 when it fails; `type` and `amount` must be present);
 * 2. claim the callback atomically (`claimKeyOf`: a once-per-order transaction by its signed fields
 *    and type; captures, returns and chargebacks by the hash of their exact text, since two partial
 *    returns of equal amount differ only in `approval-code`/`processor-rrn`):
 *    already done → 200; running elsewhere → 500 (the gateway retries later); store failing → 500;
 * 3. confirm `type`, `amount` and `currency` against `status` (`callback-confirm`; on by default):
 *    contradicted → 403, not confirmable yet or `status` failing → 500;
 * 4. a `capture` or `return`/`reversal`/`refund` callback must also be proven by one specific
 *    transaction (`callback-transactions`: `status` with `by-request-sn` on the serial numbers this
 *    client's own calls got back, or the order's totals when it made none of that kind), which it
 *    claims in the same store so no transaction vouches for two deliveries: vouched already → 403,
 *    not proven → 500 (unconfirmed: the gateway keeps retrying); a `chargeback` callback must be
 *    exactly what earlier vouched chargebacks leave of the order's `chargeback-amount`, claimed
 *    once per total reached (`proveChargeback`);
 * 5. run `onCallback(callback, currentStatus)`; a failure releases the claims and answers 500;
 * 6. complete the claims (the transaction's first), retrying a failing store a few times within
 *    about 150 ms, and answer 200. Once `onCallback` has succeeded the answer is 200 even if the
 *    store never records the completion: a 500 would make the gateway redeliver, and a redelivery
 *    after the lease would run the effect again. The claim is then neither completed nor released:
 *    a redelivery or replay within the lease answers 500 (`running-elsewhere`); one arriving after
 *    the lease has lapsed, while the store still lacks the completion, can run `onCallback` a
 *    second time. That window is reported on the span (`outcome: handled-unrecorded`) and as a
 *    warning log; make `onCallback` idempotent by the callback's transaction if it must close it.
 *
 * @packageDocumentation
 */
import { createHash } from "node:crypto"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import { confirmClaims } from "./confirm"
import { proveChargeback, proveTransaction, transactionKindOf, type ClaimOnce, type ReleaseClaim, type TransactionLookup, type TransactionProof } from "./transactions"
import { verifyCallback, type Callback, type CallbackType } from "./verify"
import type { CallError, StatusSnapshot } from "../errors"
import type { OrderCall } from "../intents/ledger"
import type { StatusReply } from "../operations/table"
import { moneyOutcome, type MoneyOutcome } from "../intents/order-state"
import type { StatusLookup } from "../intents/reconcile"
import type { SigningKeys } from "../call/sign"

/** A callback whose money claims were confirmed against `status` (or taken as claims with `confirmClaims: false`). */
export interface ConfirmedCallback extends Callback {
  /** The transaction type, confirmed. */
  readonly type: CallbackType
  /** The amount, confirmed (major units). */
  readonly amount: string
  /** The currency: the order's, when `status` was asked; else the claim (possibly absent). */
  readonly currency: string | undefined
  /** Whether `type`/`amount`/`currency` were checked against `status` (`false` only with the opt-out). */
  readonly confirmedByStatus: boolean
  /** What the order's money is now (from `status`): a stale "approved" after a refund reads `refunded` here. */
  readonly orderOutcome: MoneyOutcome | undefined
  /**
   * For a capture or return callback: the `serial-number` of the transaction that proved it (`status`
   * with `by-request-sn`). `undefined` when the order's totals proved it (a capture or return made
   * outside this client), for other types, and with `confirmClaims: false`.
   */
  readonly serialNumber?: string | undefined
}

/** This client's calls on an order (its intent ledger's `callsOn`): where capture/return serial numbers come from. */
type OrderCallsLookup = (order: { readonly client_orderid: string; readonly orderid: string }) => Effect.Effect<ReadonlyArray<OrderCall>, unknown>

/** What a claim on a callback found. */
export type ClaimResult = "claimed" | "running-elsewhere" | "done"

/**
 * Where the handler claims callbacks, by the callback's exact text (`query`: the GET query without
 * `?`, or the POSTed form body); stores keep only its hash. `claim` must be atomic: of two
 * simultaneous claims of one query exactly one gets `claimed`. A claim is a lease: if its holder
 * dies, it can be claimed again after `leaseMs`. (`@paykit/client`'s `PayStore` offers the same as
 * `claimCallback`/`completeCallback`/`releaseCallback`.) The handler also claims here the
 * transaction that proves a capture/return callback (keys `paykit-transaction|orderid|serial` and
 * `paykit-order-total|orderid|kind`) and the chain of vouched chargeback totals
 * (`paykit-chargeback|orderid|from|milli`, `…|to|milli`), so it must be one store for every
 * instance that handles callbacks. `complete` may be called on a claim whose lease has run out
 * (it must still mark it done); the handler retries a failing `complete` and never releases a
 * claim whose effect ran.
 */
export interface CallbackClaimStore {
  /** Claims the callback for `leaseMs`, or says who has it. */
  readonly claim: (query: string, leaseMs: number) => ClaimResult | Promise<ClaimResult>
  /** Marks the callback handled for good. */
  readonly complete: (query: string) => unknown
  /** Gives a claim back after a failure, so the gateway's next delivery can run at once. */
  readonly release: (query: string) => unknown
}

/** The in-memory claim store (one process), the default. `maxDone` bounds the remembered callbacks. */
export function memoryCallbackStore(maxDone = 100_000): CallbackClaimStore {
  const entries = new Map<string, { done: boolean; until: number }>()
  const keyOf = (query: string) => createHash("sha256").update(query.replace(/^\?/, "")).digest("hex")
  return {
    claim: (query, leaseMs) => {
      const key = keyOf(query)
      const now = Date.now()
      const entry = entries.get(key)
      if (entry?.done === true) return "done"
      if (entry !== undefined && entry.until > now) return "running-elsewhere"
      entries.set(key, { done: false, until: now + leaseMs })
      return "claimed"
    },
    complete: (query) => {
      const key = keyOf(query)
      entries.delete(key)
      entries.set(key, { done: true, until: Number.POSITIVE_INFINITY })
      if (entries.size > maxDone) {
        for (const [k, v] of entries) {
          if (!v.done) continue
          entries.delete(k)
          if (entries.size <= maxDone) break
        }
      }
    },
    release: (query) => {
      const key = keyOf(query)
      if (entries.get(key)?.done !== true) entries.delete(key)
    }
  }
}

/** Options of the callback handler. */
export interface CallbackHandlerOptions {
  /**
   * The merchant's code, given the confirmed callback and the order's current `status` reply
   * (`undefined` only with `confirmClaims: false`). A failure (rejection, thrown error, failed
   * Effect) answers 500 so the gateway retries.
   */
  readonly onCallback: (callback: ConfirmedCallback, current: StatusReply | undefined) => Effect.Effect<unknown, unknown> | Promise<unknown> | unknown
  /** Where callbacks are claimed (default: {@link memoryCallbackStore}); use a shared store for a fleet. */
  readonly claims?: CallbackClaimStore | undefined
  /**
   * How long a claim holds before another process may take over (default 60 000 ms). It also bounds
   * the one window left open: when `onCallback` succeeded but the store could not record the
   * completion (after retries), the handler still answers 200 and leaves the claim held, so a
   * redelivery or replay within `leaseMs` is refused (500) and one after it may run `onCallback`
   * again.
   */
  readonly leaseMs?: number | undefined
  /**
   * Confirm `type`, `amount` and `currency` against `status` before `onCallback` (default `true`).
   * Opt out only if your handler ignores those fields and reads `status` itself.
   */
  readonly confirmClaims?: boolean | undefined
}

// Transactions an order has at most one of: every callback about one (whatever unsigned fields it
// carries: a redelivery, the customer's own return page turned into a callback) is one event.
const ONCE_PER_ORDER = new Set(["sale", "preauth", "rebill", "payout", "transfer", "account-verification", "void"])

// The transaction that opens an order: an order has exactly one, whichever type a callback claims.
const OPENING = new Set(["sale", "preauth", "rebill", "payout", "transfer", "account-verification"])

/**
 * What a callback is claimed under: for a transaction an order has once (sale, preauth, rebill,
 * payout, transfer, account verification, void) its signed fields and type, so a variant with other
 * unsigned fields is the same event; for the others (captures, returns, chargebacks, which repeat
 * with equal amounts) its exact text, so only a byte-for-byte redelivery is a duplicate. The opening
 * types share one event per order and signed status: `type` is not signed, so a customer re-posting
 * their own return page as `type=rebill`, `payout`, ... is the same event, not five more.
 */
function claimKeyOf(cb: Callback): string {
  const type = cb.claims.type
  if (type === undefined || !ONCE_PER_ORDER.has(type)) return cb.raw
  return `event|${cb.status}|${OPENING.has(type) ? "opening" : type}|${cb.orderid}|${cb.client_orderid}`
}

/**
 * An opening type the order contradicts though its last transaction is a follow-up (which hides the
 * opening type from `status`): only a preauth is captured, and only a preauth order reports
 * `captured-amount`, so on such an order any other opening type is forged.
 */
function contradictsOpening(type: string | undefined, status: StatusSnapshot): boolean {
  const last = status["transaction-type"]
  if (type === undefined || !OPENING.has(type) || typeof last !== "string" || OPENING.has(last)) return false
  const preauthOrder = last === "capture" || status["captured-amount"] !== undefined
  return preauthOrder && type !== "preauth"
}

/** Dedupe key of a callback: the SHA-256 of its exact text (what stores keep instead of the text). */
export function callbackKey(cb: Callback): string {
  return createHash("sha256").update(cb.raw).digest("hex")
}

// Four more tries over about 150 ms (jittered): rides out a blip, short beside any lease.
const completionRetries = Schedule.exponential("10 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(4)))

const text = (status: number, body: string) => new Response(body, { status, headers: { "Content-Type": "text/plain" } })

class ClaimStoreFailed extends Data.TaggedError("ClaimStoreFailed")<{ readonly action: string }> {}

const storeCall = <A>(action: string, f: () => A | Promise<A>): Effect.Effect<A, ClaimStoreFailed> =>
  Effect.tryPromise({ try: async () => f(), catch: () => new ClaimStoreFailed({ action }) })

/**
 * Builds the Effect-returning handler. `calls` names this client's calls on an order (the serial
 * numbers that prove capture/return callbacks); without it only the order's totals can.
 */
export function makeCallbackHandler(
  keys: SigningKeys,
  lookup: StatusLookup,
  options: CallbackHandlerOptions,
  calls: OrderCallsLookup = () => Effect.succeed([])
): (request: Request) => Effect.Effect<Response> {
  const store = options.claims ?? memoryCallbackStore()
  const leaseMs = options.leaseMs ?? 60_000
  const confirm = options.confirmClaims !== false
  const runUser = (cb: ConfirmedCallback, current: StatusReply | undefined): Effect.Effect<unknown, unknown> =>
    Effect.suspend(() => {
      const out = options.onCallback(cb, current)
      if (Effect.isEffect(out)) return out as Effect.Effect<unknown, unknown>
      if (out instanceof Promise) return Effect.tryPromise({ try: () => out, catch: (e) => e })
      return Effect.succeed(out)
    }).pipe(Effect.catchAllDefect((d) => Effect.fail(d)))

  const outcome = (name: string, status: number, body: string) =>
    Effect.as(Effect.annotateCurrentSpan({ outcome: name }), text(status, body))
  const claimOnce: ClaimOnce = (key) => Effect.mapError(storeCall("claim", () => store.claim(key, leaseMs)), () => "store-failed" as const)
  const releaseOne: ReleaseClaim = (key) => Effect.ignore(storeCall("release", () => store.release(key)))
  // Completing a claim after `onCallback` succeeded is retried: a completion lost means a redelivery
  // after the lease could run the merchant's effect again.
  const completeOne = (key: string) => Effect.retry(storeCall("complete", () => store.complete(key)), completionRetries)
  const notProven = {
    contradicted: ["contradicted", 403, "forbidden"],
    unconfirmed: ["unconfirmed", 500, "not confirmed"],
    "running-elsewhere": ["running-elsewhere", 500, "in progress"],
    "status-failed": ["status-failed", 500, "not confirmed"],
    "store-failed": ["store-failed", 500, "store unavailable"]
  } as const

  return (request) =>
    Effect.gen(function*() {
      const verified = yield* Effect.either(verifyCallback(keys, request))
      if (Either.isLeft(verified)) return yield* outcome(verified.left.reason, 403, "forbidden")
      const cb = verified.right
      if (cb.claims.type === undefined || cb.claims.amount === undefined) return yield* outcome("missing-claims", 403, "forbidden")
      const key = claimKeyOf(cb)
      const claimed = yield* Effect.either(storeCall("claim", () => store.claim(key, leaseMs)))
      if (Either.isLeft(claimed)) return yield* outcome("store-failed", 500, "store unavailable")
      if (claimed.right === "done") return yield* outcome("duplicate", 200, "OK")
      if (claimed.right === "running-elsewhere") return yield* outcome("running-elsewhere", 500, "in progress")
      // Only an explicit claim runs the merchant's code: a store answering anything else is broken.
      if (claimed.right !== "claimed") return yield* outcome("store-failed", 500, "store unavailable")
      let proofKeys: ReadonlyArray<string> = []
      // Gives back what this delivery holds: its own claim and, once proven, its transaction's.
      const release = Effect.suspend(() => Effect.forEach([key, ...proofKeys], releaseOne, { discard: true }))

      let current: StatusReply | undefined
      let serialNumber: string | undefined
      if (confirm) {
        const status = yield* Effect.either(lookup({ client_orderid: cb.client_orderid, orderid: cb.orderid }) as Effect.Effect<StatusReply, CallError>)
        if (Either.isLeft(status)) {
          yield* release
          const refused = status.left._tag === "GatewayValidationError" && status.left.errorCode === "order-not-found"
          return yield* refused ? outcome("unknown-order", 403, "forbidden") : outcome("status-failed", 500, "not confirmed")
        }
        const snapshot = status.right as unknown as StatusSnapshot
        const mismatch = contradictsOpening(cb.claims.type, snapshot) ? { field: "type", kind: "contradicted" as const } : confirmClaims(cb, snapshot)
        if (mismatch !== undefined) {
          yield* release
          yield* Effect.annotateCurrentSpan({ mismatch: mismatch.field })
          return yield* mismatch.kind === "contradicted" ? outcome("contradicted", 403, "forbidden") : outcome("unconfirmed", 500, "not confirmed")
        }
        current = status.right
        const kind = transactionKindOf(cb.claims.type)
        if (kind !== undefined || cb.claims.type === "chargeback") {
          let proof: TransactionProof
          if (kind === undefined) {
            proof = yield* proveChargeback(cb, current, claimOnce, releaseOne)
          } else {
            const known = yield* Effect.either(calls({ client_orderid: cb.client_orderid, orderid: cb.orderid }))
            if (Either.isLeft(known)) {
              yield* release
              return yield* outcome("store-failed", 500, "store unavailable")
            }
            proof = yield* proveTransaction(cb, kind, current, known.right, lookup as unknown as TransactionLookup, claimOnce)
          }
          if (proof._tag === "NotProven") {
            yield* release
            yield* Effect.annotateCurrentSpan({ mismatch: proof.detail })
            const [name, code, body] = notProven[proof.reason]
            return yield* outcome(name, code, body)
          }
          proofKeys = [proof.claimKey, ...(proof.moreKeys ?? [])]
          serialNumber = proof.serialNumber
        }
      }
      const confirmed: ConfirmedCallback = {
        ...cb,
        type: cb.claims.type,
        amount: cb.claims.amount,
        currency: (current?.currency as string | undefined) ?? cb.claims.currency,
        confirmedByStatus: confirm,
        orderOutcome: current === undefined ? undefined : moneyOutcome(current as unknown as StatusSnapshot),
        serialNumber
      }
      const handled = yield* Effect.either(runUser(confirmed, current))
      if (Either.isLeft(handled)) {
        yield* release
        return yield* outcome("handler-failed", 500, "handler failed")
      }
      // The effect has run: from here the answer is 200 whatever the store does. A 500 would make the
      // gateway redeliver, and a redelivery after the lease would run the effect a second time. The
      // proving transaction's claims first, then the callback's, each tried even if one before failed:
      // a byte-for-byte redelivery is then a duplicate even when a transaction's claim was lost.
      const unrecorded: Array<string> = []
      for (const [name, k] of [...proofKeys.map((k) => ["proof", k] as const), ["callback", key] as const]) {
        const completed = yield* Effect.either(completeOne(k))
        // Not released either: the claim stays held until its lease ends (see `CallbackHandlerOptions.leaseMs`).
        if (Either.isLeft(completed) && !unrecorded.includes(name)) unrecorded.push(name)
      }
      if (unrecorded.length > 0) {
        yield* Effect.annotateCurrentSpan({ unrecorded: unrecorded.join(",") })
        yield* Effect.logWarning("paykit.callback: handled, but the claim store did not record it; a replay after the lease may run onCallback again").pipe(
          Effect.annotateLogs({ orderid: cb.orderid, unrecorded: unrecorded.join(",") })
        )
        return yield* outcome("handled-unrecorded", 200, "OK")
      }
      return yield* outcome("handled", 200, "OK")
    }).pipe(Effect.withSpan("paykit.callback"))
}
