/**
 * `@paykit/client`: an Effect client for the payment gateway — one typed method per operation,
 * typed errors, safe retries with reconciliation for money-moving calls, `awaitFinal` polling,
 * callback verification, and a Promise facade (`createPayClient`).
 *
 * @packageDocumentation
 */
import { checkEffectVersion } from "@paykit/contracts/effect-version"

// The engine loads Effect on first use: the app's `effect` is checked now, at import
// (docs/decisions.md#22-packages-a-team-installs).
checkEffectVersion()

export { PayClient, makePayClient, type PayClientLayerError, type PayClientMethods, type PayClientService } from "./client"
export { runToPromise } from "./transport/run-promise"
export { createPayClient, type PromisePayClient, type PromiseMethods, type PromiseCallbackHandlerOptions } from "./promise"
export {
  defaultPollPolicy,
  defaultReconcilePolicy,
  defaultRetryPolicy,
  resolveConfig,
  type FetchLike,
  type GroupPathForm,
  type PayClientConfig,
  type PayClientOptions,
  type PollPolicy,
  type ReconcilePolicy,
  type RetryPolicy
} from "./config"
export { payClientConfigFromEnv } from "./config-env"
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
  CallOperation,
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
} from "./operations/table"
export type { CallOptions } from "./call/options"
export type { PayRequest, RequestAuth, RequestError, RequestKind, RequestReply, RequestResult } from "./call/request"
export { lastResponseOf, type LastResponse, type PayHooks, type PayRequestView, type PayResponseView } from "./call/hooks"
export {
  isFinalStatus,
  type ActionRequired,
  type AwaitFinalError,
  type AwaitFinalOptions,
  type AwaitFinalQuery,
  type AwaitFinalResult,
  type Final,
  type FinalStatus
} from "./operations/await-final"
export { type Callback, type CallbackClaims, type CallbackInput, type CallbackType } from "./callbacks/verify"
export { confirmClaims, type ClaimMismatch } from "./callbacks/confirm"
export {
  callbackKey,
  memoryCallbackStore,
  type CallbackClaimStore,
  type CallbackHandlerOptions,
  type ClaimResult,
  type ConfirmedCallback
} from "./callbacks/handler"
export type { RecoverOptions, RecoverReport } from "./intents/recover"
export { storeCallbackClaims } from "./callbacks/store-claims"
export type { AdapterName } from "./store/backend"
export { memoryStoreLayer, openMemoryStore } from "./store/memory"
export { storeNonceStore } from "./store/nonces"
export { maskPans, sanitizeJson } from "./store/sanitize"
export {
  callbackQueryHash,
  PayStore,
  type LeaseOptions,
  type PayStoreHandle,
  type PayStoreService,
  type StoreOptions,
  type UnfinishedOptions
} from "./store/service"
export {
  StoreError,
  StoreInputError,
  type BeforeSnapshot,
  type CallbackClaim,
  type CallbackCompletion,
  type Intent,
  type IntentInput,
  type IntentOutcome,
  type JsonValue,
  type MigrationRecord,
  type PurgeReport,
  type RecordIntentResult,
  type RecordOutcomeResult
} from "./store/types"
export { moneyOutcome, type MoneyOutcome } from "./intents/order-state"
export { isReconciled } from "./operations/reconciled"
export { retrySchedule } from "./call/retry"
export { luhnValid, maskPan, scrubText } from "./operations/redact"
