/**
 * `@paykit/client`: an Effect client for the payment gateway — one typed method per operation,
 * typed errors, safe retries with reconciliation for money-moving calls, `awaitFinal` polling,
 * callback verification, and a Promise facade (`createPayClient`).
 *
 * @packageDocumentation
 */
export { PayClient, makePayClient, type PayClientMethods, type PayClientService } from "./client"
export { createPayClient, runToPromise, type PromisePayClient, type PromiseMethods, type PromiseCallbackHandlerOptions } from "./promise"
export {
  defaultPollPolicy,
  defaultRetryPolicy,
  payClientConfigFromEnv,
  resolveConfig,
  type FetchLike,
  type PayClientConfig,
  type PayClientOptions,
  type PollPolicy,
  type RetryPolicy
} from "./config"
export {
  AuthenticationError,
  AwaitFinalTimeout,
  CallbackSignatureError,
  DecodeError,
  GatewayServerError,
  GatewayValidationError,
  InputError,
  OutcomeUnknown,
  Timeout,
  TransportError,
  type CallError,
  type PayClientError,
  type ReadError,
  type ReconcileError
} from "./errors"
export type {
  MethodName,
  Normalized,
  OperationError,
  OperationInput,
  OperationOf,
  OperationReply,
  OperationResult,
  Reconciled,
  StatusReply
} from "./operations"
export type { CallOptions } from "./pipeline"
export {
  isFinalStatus,
  type ActionRequired,
  type AwaitFinalError,
  type AwaitFinalQuery,
  type AwaitFinalResult,
  type Final,
  type FinalStatus
} from "./await-final"
export {
  callbackKey,
  memoryCallbackStore,
  type Callback,
  type CallbackHandlerOptions,
  type CallbackInput,
  type CallbackStore
} from "./callbacks"
export { maskPan, scrubText } from "./redact"
export { MissingPrivateKey } from "./sign"
