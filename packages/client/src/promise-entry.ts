/**
 * `@paykit/client/promise`: the Promise facade alone, for an application that never uses the
 * Effect API. Importing it loads the typed errors (the very classes `@paykit/client` exports), the
 * configuration and `@paykit/signing`; the facade (`promise.ts`, and the Effect service under it)
 * loads with a client's first call (docs/decisions.md#22-packages-a-team-installs). A client's
 * keys are parsed when it is created, so a bad PEM throws there, as it does from `@paykit/client`.
 *
 * @packageDocumentation
 */
import { checkEffectVersion } from "@paykit/contracts/effect-version"
import { operations, type OperationId } from "@paykit/contracts/operations"
import { prepareKeys } from "./call/sign"
import { resolveConfig, type PayClientOptions } from "./config"
import { lazyModule } from "./lazy-module"
import type { PromiseCallbackHandlerOptions, PromisePayClient } from "./promise"

// The facade loads Effect on its first call: the app's `effect` is checked now, at import.
checkEffectVersion()

export {
  AuthenticationError,
  AwaitFinalTimeout,
  CallbackSignatureError,
  Cancelled,
  DecodeError,
  GatewayServerError,
  GatewayValidationError,
  InputError,
  isOutcomeUnknown,
  isPayClientError,
  isTransient,
  MissingPrivateKey,
  OutcomeUnknown,
  ReconcileConflict,
  Timeout,
  TransportError,
  type CallError,
  type PayClientError,
  type ReadError,
  type ReconcileError,
  type StatusSnapshot
} from "./errors"
export type { PayClientOptions, FetchLike, GroupPathForm, PollPolicy, ReconcilePolicy, RetryPolicy } from "./config"
export type { PromiseCallbackHandlerOptions, PromiseMethods, PromisePayClient } from "./promise"

const facadeModule = lazyModule(() => import("./promise"))

/**
 * Creates the Promise client: the same client `@paykit/client`'s `createPayClient` creates, built
 * on its first call. A callback handler's `claims` are checked on its first request.
 *
 * @example
 * import { createPayClient } from "@paykit/client/promise"
 * const pay = createPayClient({ baseUrl: "http://127.0.0.1:4010", login, controlKey, endpointId: 1001 })
 * const ack = await pay.sale({ client_orderid: "o-1", ... })
 */
export function createPayClient(options: PayClientOptions): PromisePayClient {
  prepareKeys(resolveConfig(options))
  let facade: PromisePayClient | undefined
  const now = (): PromisePayClient | undefined => {
    if (facade !== undefined) return facade
    const loaded = facadeModule.now()
    if (loaded === undefined) return undefined
    facade = loaded.createPayClient(options)
    // From here on the client's members are the facade's own.
    Object.assign(client, facade)
    return facade
  }
  const call = <A>(use: (f: PromisePayClient) => Promise<A>): Promise<A> => {
    const f = now()
    return f !== undefined ? use(f) : facadeModule.load().then(() => use(now()!))
  }
  const methods: Record<string, unknown> = {}
  for (const id of Object.keys(operations) as Array<OperationId>) {
    const method = operations[id].method
    methods[method] = (input: unknown, callOptions?: unknown) =>
      call((f) => (f as unknown as Record<string, (i: unknown, o: unknown) => Promise<unknown>>)[method]!(input, callOptions))
  }
  const verify: PromisePayClient["verifyCallback"] = (input) => call((f) => f.verifyCallback(input))
  const handler = (handlerOptions: PromiseCallbackHandlerOptions) => {
    let built: ((request: Request) => Promise<Response>) | undefined
    return (request: Request) =>
      built !== undefined ? built(request) : call((f) => (built ??= f.callbackHandler(handlerOptions))(request))
  }
  const client: PromisePayClient = {
    ...(methods as unknown as PromisePayClient),
    request: (request, callOptions) => call((f) => f.request(request, callOptions)),
    awaitFinal: (query, policy) => call((f) => f.awaitFinal(query, policy)),
    recover: (recoverOptions) => call((f) => f.recover(recoverOptions)),
    verifyCallback: verify,
    callbackHandler: handler,
    callbacks: { verify, handler }
  }
  now()
  return client
}
