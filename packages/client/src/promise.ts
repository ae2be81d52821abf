/**
 * The Promise facade: `createPayClient(options)` gives every operation, `request()`, `awaitFinal`,
 * `verifyCallback` and `callbackHandler` as Promise-returning functions. A failure rejects with
 * the typed error object itself (its `_tag` names the kind), never with a wrapper.
 *
 * @packageDocumentation
 */
import { operations, type OperationId } from "@paykit/contracts/operations"
import type * as Effect from "effect/Effect"
import type { AwaitFinalOptions, AwaitFinalQuery, AwaitFinalResult } from "./operations/await-final"
import type { Callback, CallbackInput } from "./callbacks/verify"
import type { CallbackClaimStore, ConfirmedCallback } from "./callbacks/handler"
import { makePayClientParts } from "./client"
import { resolveConfig, type PayClientOptions } from "./config"
import type { OperationInput, OperationResult, StatusReply } from "./operations/table"
import type { CallOptions } from "./call/options"
import type { PayRequest, RequestKind, RequestResult } from "./call/request"
import type { RecoverOptions, RecoverReport } from "./intents/recover"
import { runToPromise } from "./transport/run-promise"

type Ops = typeof operations

/** One Promise-returning method per operation. */
export type PromiseMethods = {
  readonly [Op in OperationId as Ops[Op]["method"]]: (input: OperationInput<Op>, options?: CallOptions) => Promise<OperationResult<Op>>
}

/** Options of the Promise callback handler (as `CallbackHandlerOptions`, with Promise-returning user code). */
export interface PromiseCallbackHandlerOptions {
  /**
   * User code, given the confirmed callback and the order's current `status` reply (`undefined` only
   * with `confirmClaims: false`); a rejection or thrown error answers 500 so the gateway retries.
   */
  readonly onCallback: (callback: ConfirmedCallback, current: StatusReply | undefined) => unknown
  /** Where callbacks are claimed (default: in memory); a shared store for a fleet. */
  readonly claims?: CallbackClaimStore | undefined
  /** How long a claim holds before another process may take over (default 60 000 ms). */
  readonly leaseMs?: number | undefined
  /** Confirm `type`, `amount` and `currency` against `status` first (default `true`). */
  readonly confirmClaims?: boolean | undefined
}

/** The Promise client. */
export interface PromisePayClient extends PromiseMethods {
  /**
   * The signed escape hatch: an operation or field beyond the spec, sent through the same steps as
   * every typed call (signing, hooks, redaction, deadlines; `read` resends on a transient failure,
   * `money` runs under an idempotency key and is reconciled by `client_orderid` when its outcome is
   * unknown). Resolves to the decoded reply as a record of strings (a money call's with its
   * `idempotencyKey`, or `Reconciled`); rejects with the typed error, `InputError` naming the field
   * and the rule for a description that breaks one (docs/decisions.md#24-a-signed-escape-hatch).
   *
   * @example
   * const credit = await pay.request({
   *   path: "/api/v2/x-test/loyalty-credit/{endpointId}", auth: "control", kind: "money",
   *   controlFields: ["endpointId", "client_orderid", "amount"],
   *   fields: { client_orderid: "lc-1", amount: "2.50", currency: "USD", loyalty_account: "LA-1" }
   * })
   */
  readonly request: <K extends RequestKind>(request: PayRequest<K>, options?: CallOptions) => Promise<RequestResult<K>>
  /** Polls `status` until final (or a redirect to act on). */
  readonly awaitFinal: (query: AwaitFinalQuery, options?: AwaitFinalOptions) => Promise<AwaitFinalResult>
  /** Verifies a callback's `control` (constant time) and decodes it; rejects with `CallbackSignatureError`. */
  readonly verifyCallback: (input: CallbackInput) => Promise<Callback>
  /** A `Request → Response` callback endpoint (verify, dedupe, optionally confirm, hand off). */
  readonly callbackHandler: (options: PromiseCallbackHandlerOptions) => (request: Request) => Promise<Response>
  /** Settles intents a crashed instance left unfinished in the shared store (zeros without a store). */
  readonly recover: (options?: RecoverOptions) => Promise<RecoverReport>
  /** `verifyCallback` and `callbackHandler` grouped (docs/decisions.md#the-data-path's `client.callbacks`). */
  readonly callbacks: {
    /** Same as `verifyCallback`. */
    readonly verify: (input: CallbackInput) => Promise<Callback>
    /** Same as `callbackHandler`. */
    readonly handler: (options: PromiseCallbackHandlerOptions) => (request: Request) => Promise<Response>
  }
}


/**
 * Creates the Promise client.
 *
 * @example
 * const pay = createPayClient({ baseUrl: "http://127.0.0.1:4010", login, controlKey, endpointId: 1001 })
 * const ack = await pay.sale({ client_orderid: "o-1", ... })
 * const final = await pay.awaitFinal({ client_orderid: "o-1" })
 */
export function createPayClient(options: PayClientOptions): PromisePayClient {
  const { service, pipeline } = makePayClientParts(resolveConfig(options))
  const methods: Record<string, unknown> = {}
  for (const id of Object.keys(operations) as Array<OperationId>) {
    // Without a fiber on the happy path: the pipeline's fiber-free first attempt, continuing any
    // other outcome in the same Effect steps the service runs (see call/pipeline.ts).
    methods[operations[id].method] = (input: unknown, callOptions?: CallOptions) => pipeline.callPromise(id, input, callOptions)
  }
  const verify = (input: CallbackInput) => runToPromise(service.verifyCallback(input))
  const handler = (handlerOptions: PromiseCallbackHandlerOptions) => {
    const run = service.callbackHandler(handlerOptions)
    return (request: Request) => runToPromise(run(request))
  }
  return {
    ...(methods as unknown as PromiseMethods),
    request: <K extends RequestKind>(request: PayRequest<K>, callOptions?: CallOptions) => pipeline.requestPromise(request, callOptions) as Promise<RequestResult<K>>,
    awaitFinal: (query, policy) => runToPromise(service.awaitFinal(query, policy)),
    recover: (options) => runToPromise(service.recover(options)),
    verifyCallback: verify,
    callbackHandler: handler,
    callbacks: { verify, handler }
  }
}
