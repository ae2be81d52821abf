/**
 * Client configuration: the plain config object and its resolved form (secrets wrapped in
 * `Redacted`); `config-env.ts` reads it from the environment.
 *
 * @packageDocumentation
 */
import * as Redacted from "effect/Redacted"
import type { MinorUnits } from "@paykit/signing"
import type { PayHooks } from "./call/hooks"
import type { PayStoreService } from "./store/service"

/** Retry policy: exponential backoff with full jitter. */
export interface RetryPolicy {
  /** Resends after the first attempt (default 3). */
  readonly maxRetries: number
  /** First backoff ceiling in ms (default 250). */
  readonly baseDelayMs: number
  /** Largest backoff ceiling in ms (default 5000). */
  readonly maxDelayMs: number
  /** Full jitter (default `true`): sleep a uniform random time in [0, ceiling]. */
  readonly jitter: boolean
}

/** How `awaitFinal` polls: fast at first, then slower, up to a deadline (the gateway's own advice). */
export interface PollPolicy {
  /** Interval during the first phase (default 4000 ms: "every 3-5 seconds"). */
  readonly fastIntervalMs: number
  /** Length of the first phase (default 5 min). */
  readonly fastPhaseMs: number
  /** Interval afterwards (default 7.5 min: "once in 5-10 minutes"). */
  readonly slowIntervalMs: number
  /** Give up after this long (default 1 h). */
  readonly deadlineMs: number
  /** Return `ActionRequired` when a 3DS/form redirect is pending (default `true`) instead of waiting on. */
  readonly stopOnRedirect: boolean
  /** How long the gateway's `unknown` status is polled before the wait ends in `AwaitFinalTimeout` (default 5 min). */
  readonly unknownGraceMs: number
}

/** How a call whose outcome is unknown proves what happened (see `reconcile`). */
export interface ReconcilePolicy {
  /**
   * How long an order on which a capture, return, void or payout-pay was sent must stay unchanged
   * after the call's sends ended before that proves the send did not land (default: the per-attempt
   * `timeoutMs`, 30 000 ms unless set). Set it at least as long as the gateway may hold a request
   * before processing it: a send may start just before the call's deadline, and a request the
   * gateway still holds lands up to that much later (docs/fleet.md#a-gateway-that-forgets-orders).
   */
  readonly settleMs: number
  /** Interval between `status` polls while proving (default a tenth of `settleMs`, within 50–2000 ms). */
  readonly pollIntervalMs: number
  /**
   * How long after a call's first send the gateway's `order-not-found` still proves the call never
   * landed (default 600 000 ms). The gateway forgets old final orders, so later the same answer may
   * mean a paid order it no longer keeps: the call then ends `OutcomeUnknown` for a person to settle.
   * Keep it below how long the gateway keeps final orders (docs/fleet.md#the-intent-protocol); 0
   * when the gateway may forget a final order at once (it then never proves anything).
   */
  readonly notFoundProvesWithinMs: number
}

/** Defaults of {@link ReconcilePolicy} (`settleMs` follows the client's `timeoutMs` when not set). */
export const defaultReconcilePolicy: ReconcilePolicy = { settleMs: 30_000, pollIntervalMs: 2_000, notFoundProvesWithinMs: 600_000 }

/** Defaults of {@link RetryPolicy}. */
export const defaultRetryPolicy: RetryPolicy = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 5000, jitter: true }

/** Defaults of {@link PollPolicy}, modelled on the gateway's polling advice. */
export const defaultPollPolicy: PollPolicy = {
  fastIntervalMs: 4000,
  fastPhaseMs: 5 * 60_000,
  slowIntervalMs: 7.5 * 60_000,
  deadlineMs: 60 * 60_000,
  stopOnRedirect: true,
  unknownGraceMs: 5 * 60_000
}

/**
 * The path form of a call to an endpoint group (docs/decisions.md#16-endpoint-groups): the interface's
 * `/{command}/{endpointGroupId}` (`"endpoint-id"`) or the gateway's `/{command}/group/{endpointGroupId}` (`"group-path"`).
 */
export type GroupPathForm = "endpoint-id" | "group-path"

/**
 * A `fetch`-shaped function; inject the simulator's in-process handler in tests. Each attempt's
 * abort signal travels beside the `Request`, as WHATWG `fetch(input, init)` takes it
 * (docs/decisions.md#20-speed-against-a-careful-hand-written-call): pass `init` on to the
 * underlying `fetch` (`(request, init) => fetch(request, init)`) so that a timeout, the caller's
 * signal or an interruption cancels the request itself.
 */
export type FetchLike = (request: Request, init?: { signal?: AbortSignal }) => Promise<Response>

/** One control key as a caller writes it: a plain string or already `Redacted`. */
type ControlKeyOption = string | Redacted.Redacted<string>

/**
 * The configuration a caller writes. Secrets may be plain strings or already `Redacted`. With
 * `onRequest` / `onResponse` ({@link PayHooks}), every attempt of every call is reported, redacted.
 */
export interface PayClientOptions extends PayHooks {
  /** Gateway base URL, e.g. `http://127.0.0.1:4010` (paths are appended to it). */
  readonly baseUrl: string
  /** The merchant login. */
  readonly login: string
  /**
   * The merchant control key (signs the control digests); pass a `Redacted` to keep it out of logs.
   * During a key rotation, a list with the current key first and the previous key(s) after it:
   * requests are signed with the first, callbacks and final redirects verify against any of them
   * and say which one matched (`Callback.keyIndex`).
   */
  readonly controlKey: ControlKeyOption | ReadonlyArray<ControlKeyOption>
  /** PEM of the merchant's RSA private key; needed only by the v4 (OAuth RSA) operations. */
  readonly privateKeyPem?: string | Redacted.Redacted<string> | undefined
  /** The endpoint id (`endpointId` path parameter of most operations). */
  readonly endpointId: number | string
  /** Endpoint-group id, used instead of `endpointId` when a call passes `{ endpoint: "group" }`. */
  readonly endpointGroupId?: number | string | undefined
  /**
   * How a call to the endpoint group writes its path (docs/decisions.md#16-endpoint-groups): `"endpoint-id"` (the
   * default, the interface's form: the group id in `{endpointId}`, e.g. `/api/v2/sale/2001`) or
   * `"group-path"` (the gateway's form `/{command}/group/{endpointGroupId}`, e.g.
   * `/api/v2/sale/group/2001`, as its official libraries send it). A call may override it.
   */
  readonly groupPathForm?: GroupPathForm | undefined
  /** The `fetch` to send requests with (default: the global `fetch`); tests pass the simulator's handler. */
  readonly fetch?: FetchLike | undefined
  /** Overrides of `defaultRetryPolicy`. */
  readonly retry?: Partial<RetryPolicy> | undefined
  /** Per-attempt timeout in ms (default 30 000). */
  readonly timeoutMs?: number | undefined
  /** Overall limit of one call, retries and reconciliation included, in ms (default 120 000). */
  readonly deadlineMs?: number | undefined
  /** Overrides of `defaultReconcilePolicy`. */
  readonly reconcile?: Partial<ReconcilePolicy> | undefined
  /** Overrides of `defaultPollPolicy` (used by `awaitFinal`). */
  readonly poll?: Partial<PollPolicy> | undefined
  /**
   * A shared store (`openMemoryStore`, `openPgliteStore`, `openPostgresStore`): idempotency keys and
   * callback claims then hold across processes and restarts (default: in this client's memory).
   */
  readonly store?: PayStoreService | undefined
  /** With a store: how long a call holds its intent before another instance may take it over (default 120 000 ms). */
  readonly intentLeaseMs?: number | undefined
  /**
   * How control digests write amounts (docs/decisions.md#2-amounts-in-cents): `"cents"` (the default: × 100 for
   * every currency, as the gateway's own libraries sign) or `"iso4217"` (the currency's exponent:
   * JPY 0, KWD 3). It must match the gateway's setting for this merchant.
   */
  readonly minorUnits?: MinorUnits | undefined
}

/** The resolved configuration the client runs on. Secrets only as `Redacted`. */
export interface PayClientConfig extends PayHooks {
  /** Gateway base URL (paths are appended to it). */
  readonly baseUrl: string
  /** The merchant login. */
  readonly login: string
  /** The merchant control key requests are signed with (the first listed), held as `Redacted`. */
  readonly controlKey: Redacted.Redacted<string>
  /**
   * Every key a callback or final redirect may be signed with, current first, each held as
   * `Redacted`. `resolveConfig` always fills it; absent (a config built by hand) means `[controlKey]`.
   */
  readonly controlKeys?: ReadonlyArray<Redacted.Redacted<string>> | undefined
  /** PEM of the merchant's RSA private key (v4 operations), held as `Redacted`, or `undefined`. */
  readonly privateKeyPem: Redacted.Redacted<string> | undefined
  /** The endpoint id, as a string. */
  readonly endpointId: string
  /** The endpoint-group id, when configured. */
  readonly endpointGroupId: string | undefined
  /** How calls to the endpoint group write their path (`"endpoint-id"` unless asked). */
  readonly groupPathForm: GroupPathForm
  /** The `fetch` given in the options, or `undefined` for the global one. */
  readonly fetch: FetchLike | undefined
  /** The retry policy in force. */
  readonly retry: RetryPolicy
  /** Per-attempt timeout in ms. */
  readonly timeoutMs: number
  /** Overall limit of one call in ms. */
  readonly deadlineMs: number
  /** The reconciliation policy in force. */
  readonly reconcile: ReconcilePolicy
  /** The `awaitFinal` polling policy in force. */
  readonly poll: PollPolicy
  /** The shared store, when configured. */
  readonly store?: PayStoreService | undefined
  /** With a store: the intent lease in ms. */
  readonly intentLeaseMs?: number | undefined
  /** The minor-units mode of control digests (`"cents"` unless asked). */
  readonly minorUnits: MinorUnits
}

const redact = (value: string | Redacted.Redacted<string>): Redacted.Redacted<string> =>
  Redacted.isRedacted(value) ? value : Redacted.make(value)

// One key or a rotation's list, current first. An empty list signs with an empty key, which the
// signing package refuses per call exactly as it refuses an empty single key.
function controlKeys(option: PayClientOptions["controlKey"]): ReadonlyArray<Redacted.Redacted<string>> {
  return Array.isArray(option) ? option.map(redact) : [redact(option as ControlKeyOption)]
}

// The window follows the per-attempt timeout; polls look about ten times within it (50 ms to 2 s apart).
function reconcilePolicy(options: PayClientOptions): ReconcilePolicy {
  const settleMs = options.reconcile?.settleMs ?? options.timeoutMs ?? defaultReconcilePolicy.settleMs
  const pollIntervalMs = options.reconcile?.pollIntervalMs ?? Math.min(defaultReconcilePolicy.pollIntervalMs, Math.max(50, Math.round(settleMs / 10)))
  const notFoundProvesWithinMs = options.reconcile?.notFoundProvesWithinMs ?? defaultReconcilePolicy.notFoundProvesWithinMs
  return { settleMs, pollIntervalMs, notFoundProvesWithinMs }
}

/** Resolves caller options into a {@link PayClientConfig}, filling defaults and wrapping secrets. */
export function resolveConfig(options: PayClientOptions): PayClientConfig {
  const keys = controlKeys(options.controlKey)
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    login: options.login,
    controlKey: keys[0] ?? Redacted.make(""),
    controlKeys: keys,
    privateKeyPem: options.privateKeyPem === undefined ? undefined : redact(options.privateKeyPem),
    endpointId: String(options.endpointId),
    endpointGroupId: options.endpointGroupId === undefined ? undefined : String(options.endpointGroupId),
    groupPathForm: options.groupPathForm ?? "endpoint-id",
    fetch: options.fetch,
    retry: { ...defaultRetryPolicy, ...options.retry },
    timeoutMs: options.timeoutMs ?? 30_000,
    deadlineMs: options.deadlineMs ?? 120_000,
    reconcile: reconcilePolicy(options),
    poll: { ...defaultPollPolicy, ...options.poll },
    store: options.store,
    intentLeaseMs: options.intentLeaseMs,
    minorUnits: options.minorUnits ?? "cents",
    // Only when given: a client without hooks has the same config as before.
    ...(options.onRequest === undefined ? {} : { onRequest: options.onRequest }),
    ...(options.onResponse === undefined ? {} : { onResponse: options.onResponse })
  }
}
