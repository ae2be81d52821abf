/**
 * `@paykit/testkit`: a stateful simulator of the card-payment gateway (in-process fetch handler
 * and HTTP server), its virtual clock, fault injection, test cards and request fixtures.
 *
 * @packageDocumentation
 */
export { createSimulator, testMerchantConfig } from "./simulator"
export type {
  CallbackAttempt,
  CardView,
  FaultKind,
  FaultRule,
  InvariantViolation,
  MerchantConfig,
  OrderView,
  Simulator,
  SimulatorOptions,
  TransactionView,
  CallbackConnection,
  CallbackResolver,
  CallbackTransport,
  ResolvedAddress,
  RequestRecord,
  RequestLimits,
  TestRouteAccess,
  RateLimit
} from "./types"
export { formatRequestLine } from "./request-line"
export {
  startProxy,
  ProxyOptionsError,
  CALLBACK_PATH,
  checkCallback,
  checkReply,
  checkRequest,
  formatMismatch,
  formatExchangeLines,
  readRecording,
  parseRecording,
  RecordingFormatError,
  RECORDING_HEADER,
  EXCHANGE_LOG_CAPACITY,
  type CheckingProxy,
  type ProxyOptions,
  type CheckedRequest,
  type Mismatch,
  type MismatchKind,
  type ExchangeRecord,
  type RecordedExchange
} from "./proxy/index"
export { DEFAULT_LIMITS, RequestLimitsError } from "./http-edge"
export { CallbackTargetsError } from "./callback-targets"
export { RateLimitError } from "./fair-use"
export { testMerchant } from "./fixtures/test-merchant"
export { REQUEST_LOG_CAPACITY, type LoggedRequest } from "./request-log"
export { requests, requestsByOperation, newClientOrderId } from "./fixtures/requests"
export { testCards, magicAmounts, SLOW_CARD_DELAY_MS, CHARGEBACK_DELAY_MS, type Outcome, type TestCard } from "./cards"
export type { ChargebackRefusal } from "./engine"
export { CALLBACK_FIRST_DELAY_MS, CALLBACK_MAX_ATTEMPTS, CALLBACK_MAX_DELAY_MS } from "./callbacks"
export type { ThreeDSStateName } from "./threeds"
export { SNAPSHOT_VERSION } from "./snapshot"
export { DEFAULT_RETENTION, type RetentionPolicy } from "./state/retention"
export type {
  SimulatorSnapshot,
  SnapshotCallbackJob,
  SnapshotCard,
  SnapshotChargebackJob,
  SnapshotCardRef,
  SnapshotFinalizeJob,
  SnapshotJob,
  SnapshotLedger,
  SnapshotNonce,
  SnapshotOrder,
  SnapshotRecurringChargeJob,
  SnapshotRecurringPayment,
  SnapshotSettleJob,
  SnapshotTransaction
} from "./snapshot"
