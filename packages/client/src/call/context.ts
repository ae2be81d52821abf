/**
 * What every call of one client shares, built once per client: its configuration and signing keys,
 * the sender over its transport, its intent ledger, the fetches each money call still has out, the
 * order locks, the default retry schedule, and the client's own `status` call for reconciliation.
 * Each step of a call (`check.ts`, `attempt.ts`, `pipeline.ts`, `money.ts`) is a module-level
 * function over this one record.
 *
 * @packageDocumentation
 */
import type * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import type { PayClientConfig } from "../config"
import type { CallError } from "../errors"
import type { IntentLedger } from "../intents/ledger"
import type { OrderLocks } from "../intents/order-locks"
import type { StatusReply } from "../operations/table"
import type { Sender } from "../transport/fetch"
import { makeKeyedFetches, type KeyedFetches } from "./keyed-fetches"
import type { CallOptions } from "./options"
import { retrySchedule } from "./retry"
import type { SigningKeys } from "./sign"

/** The client's `status` call with per-call options: the one reconciliation reads the order with. */
export type StatusCall = (query: { client_orderid: string; orderid?: string }, options: CallOptions) => Effect.Effect<StatusReply, CallError>

/** One client's call context. */
export interface CallContext {
  readonly config: PayClientConfig
  readonly keys: SigningKeys
  /** Starts one attempt's fetch (timeout, signal, abort) and reports how it ended. */
  readonly send: Sender
  /** Where money-moving calls record their intents (in memory, or over a store). */
  readonly ledger: IntentLedger
  /** Each money call's fetches, by idempotency key, until each fetch itself returns. */
  readonly fetches: KeyedFetches
  /** One call at a time per order, from its snapshot to its proof. */
  readonly orders: OrderLocks
  /** The client's retry schedule (a per-call override builds its own, only when a retry is due). */
  readonly schedule: Schedule.Schedule<unknown, unknown>
  /**
   * The client's own `status` call, span included, as a caller would make it: reconciliation reads
   * the order through it. Set once by `makePipeline`, which owns the call entry.
   */
  readonly status: StatusCall
  /**
   * The gateway's origin as a span names it (OpenTelemetry's `server.address`, `server.port`,
   * `url.full` without credentials); `undefined` when the base URL does not parse.
   */
  readonly server: ServerOf | undefined
}

/** The gateway's server attributes, parsed once per client. */
export interface ServerOf {
  readonly address: string
  readonly port: number
  /** Scheme, host, port and the base URL's own path, without user info, query or fragment. */
  readonly origin: string
}

/** The server attributes of a base URL (docs/decisions.md#23-request-hooks). */
export function serverOf(baseUrl: string): ServerOf | undefined {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    return undefined
  }
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80
  return { address: url.hostname, port, origin: `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}` }
}

/** The context of one client's calls; `status` is the entry `makePipeline` builds over it. */
export function makeCallContext(
  config: PayClientConfig,
  keys: SigningKeys,
  send: Sender,
  ledger: IntentLedger,
  status: (ctx: CallContext) => StatusCall
): CallContext {
  const ctx: { -readonly [K in keyof CallContext]: CallContext[K] } = {
    config,
    keys,
    send,
    ledger,
    fetches: makeKeyedFetches(),
    orders: ledger.orders,
    schedule: retrySchedule(config.retry),
    status: undefined as unknown as StatusCall,
    server: serverOf(config.baseUrl)
  }
  ctx.status = status(ctx)
  return ctx
}
