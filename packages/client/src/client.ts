/**
 * The `PayClient` Effect service: one method per operation (declared from the operation table),
 * `awaitFinal`, and callback verification, plus its layers.
 *
 * @packageDocumentation
 */
import { operations, type OperationId } from "@paykit/contracts/operations"
import { KeyFormatError, WeakKeyError } from "@paykit/signing"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { awaitFinal, type AwaitFinalError, type AwaitFinalOptions, type AwaitFinalQuery, type AwaitFinalResult } from "./operations/await-final"
import { verifyCallback, type Callback, type CallbackInput } from "./callbacks/verify"
import { makeCallbackHandler, memoryCallbackStore, type CallbackHandlerOptions } from "./callbacks/handler"
import { resolveConfig, type PayClientConfig, type PayClientOptions } from "./config"
import { payClientConfigFromEnv } from "./config-env"
import { InputError, type CallbackSignatureError } from "./errors"
import type { RecoverOptions, RecoverReport } from "./intents/recover"
import { lazyEngine } from "./lazy-engine"
import { PayStore } from "./store/service"
import type { StoreError, StoreInputError } from "./store/types"
import { storeCallbackClaims, storeOfClaims } from "./callbacks/store-claims"
import type { OperationError, OperationInput, OperationResult } from "./operations/table"
import type { CallOptions } from "./call/options"
import type { Pipeline } from "./call/pipeline"
import type { PayRequest, RequestError, RequestKind, RequestResult } from "./call/request"
import { prepareKeys } from "./call/sign"

type Ops = typeof operations

/** One Effect-returning method per operation, named by the table's `method` column. */
export type PayClientMethods = {
  readonly [Op in OperationId as Ops[Op]["method"]]: (
    input: OperationInput<Op>,
    options?: CallOptions
  ) => Effect.Effect<OperationResult<Op>, OperationError<Op>>
}

/** The service: every operation of the table, `request()`, `awaitFinal` and callbacks. */
export interface PayClientService extends PayClientMethods {
  /**
   * The signed escape hatch: an operation or field beyond the spec, described by its path, auth,
   * control field list, wire fields and kind, sent through the same steps as every typed call
   * (signing, hooks, spans, redaction, deadlines; `read` resends on a transient failure, `money`
   * runs under an idempotency key and is reconciled by `client_orderid` when its outcome is
   * unknown). Resolves to the decoded reply as a record of strings. A description that breaks a
   * rule fails with `InputError` naming the field and the rule before anything is sent
   * (docs/decisions.md#24-a-signed-escape-hatch).
   *
   * @example
   * pay.request({
   *   path: "/api/v2/x-test/loyalty-credit/{endpointId}", auth: "control", kind: "money",
   *   controlFields: ["endpointId", "client_orderid", "amount"],
   *   fields: { client_orderid: "lc-1", amount: "2.50", currency: "USD", loyalty_account: "LA-1" }
   * })
   */
  readonly request: <K extends RequestKind>(request: PayRequest<K>, options?: CallOptions) => Effect.Effect<RequestResult<K>, RequestError<K>>
  /** Polls `status` until final (or a redirect to act on); see `await-final`. */
  readonly awaitFinal: (query: AwaitFinalQuery, options?: AwaitFinalOptions) => Effect.Effect<AwaitFinalResult, AwaitFinalError>
  /** Verifies a callback's `control` (constant time) and decodes it. */
  readonly verifyCallback: (input: CallbackInput) => Effect.Effect<Callback, CallbackSignatureError>
  /** A `Request → Response` callback endpoint (verify, dedupe, optionally confirm, hand off). */
  readonly callbackHandler: (options: CallbackHandlerOptions) => (request: Request) => Effect.Effect<Response>
  /** The same two callback functions grouped, as docs/decisions.md#the-data-path names them (`client.callbacks`). */
  readonly callbacks: {
    /** Same as `verifyCallback`. */
    readonly verify: (input: CallbackInput) => Effect.Effect<Callback, CallbackSignatureError>
    /** Same as `callbackHandler`. */
    readonly handler: (options: CallbackHandlerOptions) => (request: Request) => Effect.Effect<Response>
  }
  /**
   * Settles intents a crashed instance left unfinished in the shared store (see `recover`); with no
   * store configured there is nothing to recover and it reports zeros.
   */
  readonly recover: (options?: RecoverOptions) => Effect.Effect<RecoverReport, StoreError | StoreInputError>
  /** The resolved configuration (secrets only as `Redacted`). */
  readonly config: PayClientConfig
}

/**
 * Builds the service. Parses the private key once (throws the signing package's `KeyFormatError` or
 * `WeakKeyError` for a bad PEM, without key material in them). Money-moving calls share one
 * in-memory idempotency ledger per client.
 */
export function makePayClient(config: PayClientConfig): PayClientService {
  return makePayClientParts(config).service
}

// Each claim store and the intents it serves (docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet): a callback is
// proven by the calls of the intents beside its claims, so one claim store serves one set of intents.
const claimsHome = new WeakMap<object, object>()

/**
 * Binds a claim store to the intents of the client whose handler uses it, refusing a claim store
 * already serving other intents (two clients each with its own in-memory intents, or another
 * `PayStore`): such a fleet could run one callback's effect twice.
 *
 * @throws InputError naming `claims` and the rule.
 */
function bindClaims(claims: object, intents: object): void {
  const home = claimsHome.get(claims) ?? storeOfClaims(claims)
  if (home !== undefined && home !== intents) {
    throw new InputError({
      operation: "callbackHandler", field: "claims",
      rule: "must live in the same PayStore as the client's intents: give every instance the one shared store (createPayClient({ store })) and no claims of its own"
    })
  }
  claimsHome.set(claims, intents)
}

/**
 * The service and the pipeline under it (the Promise facade calls the pipeline's Promise-native
 * path). The pipeline, the intent ledger and the Schemas they check calls with are built on the
 * client's first call (`lazy-engine.ts`); the private key is parsed here, so a bad one throws now.
 */
export function makePayClientParts(config: PayClientConfig): { readonly service: PayClientService; readonly pipeline: Pipeline } {
  const keys = prepareKeys(config)
  const store = config.store
  const engine = lazyEngine(config, keys)
  const pipeline = engine.pipeline
  // What this client's intents live in: the shared store, or this client's own (in-memory) ledger,
  // which the engine builds later and this object stands for. Claims shared with another client
  // split the fleet's records.
  const intentsHome: object = store ?? engine
  const methods: Record<string, unknown> = {}
  for (const id of Object.keys(operations) as Array<OperationId>) {
    methods[operations[id].method] = (input: unknown, options?: CallOptions) => pipeline.call(id, input, options)
  }
  const verify = (input: CallbackInput) => verifyCallback(keys, input)
  // One claim store per client, not per handler: two handlers built from one client still run a
  // callback's effect once.
  const claims = store === undefined ? memoryCallbackStore() : storeCallbackClaims(store)
  const handler = (options: CallbackHandlerOptions) => {
    if (options.claims !== undefined) bindClaims(options.claims, intentsHome)
    return makeCallbackHandler(keys, pipeline.status, options.claims !== undefined ? options : { ...options, claims }, engine.callsOn)
  }
  const service: PayClientService = {
    ...(methods as unknown as PayClientMethods),
    request: <K extends RequestKind>(request: PayRequest<K>, options?: CallOptions) =>
      pipeline.request(request, options) as Effect.Effect<RequestResult<K>, RequestError<K>>,
    recover: (options) =>
      store === undefined
        ? Effect.succeed({ claimed: 0, applied: 0, notApplied: 0, unresolved: 0, unknown: 0 })
        : engine.recover(store, options),
    awaitFinal: (query, options) => {
      const { signal, ...policy } = options ?? {}
      return awaitFinal(pipeline.status, query, { ...config.poll, ...policy }, signal)
    },
    verifyCallback: verify,
    callbackHandler: handler,
    callbacks: { verify, handler },
    config
  }
  return { service, pipeline }
}

/** Why a layer could not build the client: a private key that does not load. */
export type PayClientLayerError = KeyFormatError | WeakKeyError

const keyFailure = (e: unknown): PayClientLayerError => {
  if (e instanceof KeyFormatError || e instanceof WeakKeyError) return e
  // Anything else thrown while building is a bug, not an input problem: let it be a defect.
  throw e
}

/** The client as an Effect service. */
export class PayClient extends Context.Tag("@paykit/client/PayClient")<PayClient, PayClientService>() {
  /** A layer from a config object; fails with {@link PayClientLayerError} when the private key does not load. */
  static layer(options: PayClientOptions): Layer.Layer<PayClient, PayClientLayerError> {
    return Layer.effect(PayClient, Effect.try({ try: () => makePayClient(resolveConfig(options)), catch: keyFailure }))
  }

  /**
   * A layer from a config object that takes its idempotency keys and callback claims from the
   * `PayStore` service in context (`memoryStoreLayer`, `pgliteStoreLayer`, `postgresStoreLayer`).
   */
  static layerWithStore(options: Omit<PayClientOptions, "store">): Layer.Layer<PayClient, PayClientLayerError, PayStore> {
    return Layer.effect(
      PayClient,
      Effect.flatMap(PayStore, (store) => Effect.try({ try: () => makePayClient(resolveConfig({ ...options, store })), catch: keyFailure }))
    )
  }

  /**
   * A layer from the environment (`PAYKIT_BASE_URL`, `PAYKIT_LOGIN`, `PAYKIT_CONTROL_KEY`,
   * `PAYKIT_PRIVATE_KEY` or `PAYKIT_PRIVATE_KEY_FILE`, `PAYKIT_ENDPOINT_ID`,
   * `PAYKIT_ENDPOINT_GROUP_ID`); `overrides` adds what env cannot carry (a `fetch`, policies, hooks).
   */
  static layerConfig(
    overrides: Partial<Pick<PayClientConfig, "fetch" | "retry" | "timeoutMs" | "deadlineMs" | "reconcile" | "poll" | "onRequest" | "onResponse">> = {}
  ): Layer.Layer<PayClient, PayClientLayerError | ConfigError.ConfigError> {
    return Layer.effect(
      PayClient,
      Effect.flatMap(payClientConfigFromEnv, (config) =>
        Effect.try({ try: () => makePayClient({ ...config, ...overrides }), catch: keyFailure }))
    )
  }
}
