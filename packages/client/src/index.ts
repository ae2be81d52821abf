/**
 * `@paykit/client`: an Effect client for the payment gateway — one typed method per operation,
 * typed errors, safe retries with reconciliation for money-moving calls, `awaitFinal` polling,
 * callback verification, and a Promise facade (`createPayClient`).
 *
 * @packageDocumentation
 */
export { PayClient, makePayClient, type PayClientLayerError, type PayClientMethods, type PayClientService } from "./client"
export { createPayClient, runToPromise, type PromisePayClient, type PromiseMethods, type PromiseCallbackHandlerOptions } from "./promise"
export {
  defaultPollPolicy,
  defaultReconcilePolicy,
  defaultRetryPolicy,
  payClientConfigFromEnv,
  resolveConfig,
  type FetchLike,
  type GroupPathForm,
  type PayClientConfig,
  type PayClientOptions,
  type PollPolicy,
  type ReconcilePolicy,
  type RetryPolicy
} from "./config"
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
export type {
  Keyed,
  MethodName,
  Normalized,
  OperationError,
  OperationInput,
  OperationOf,
  OperationReply,
  OperationResult,
  Reconciled,
  StatusExtras,
  StatusReply,
  TransactionType
} from "./operations"
export type { CallOptions } from "./pipeline"
export {
  isFinalStatus,
  type ActionRequired,
  type AwaitFinalError,
  type AwaitFinalOptions,
  type AwaitFinalQuery,
  type AwaitFinalResult,
  type Final,
  type FinalStatus
} from "./await-final"
export { type Callback, type CallbackClaims, type CallbackInput, type CallbackType } from "./callback-verify"
export { confirmClaims, type ClaimMismatch } from "./callback-confirm"
export {
  callbackKey,
  memoryCallbackStore,
  type CallbackClaimStore,
  type CallbackHandlerOptions,
  type ClaimResult,
  type ConfirmedCallback
} from "./callbacks"
export type { RecoverOptions, RecoverReport } from "./recover"
export { storeCallbackClaims } from "./store-ledger"
export * from "./store/index"
export { moneyOutcome, type MoneyOutcome } from "./order-state"
export { retrySchedule } from "./pipeline"
export { luhnValid, maskPan, scrubText } from "./redact"
