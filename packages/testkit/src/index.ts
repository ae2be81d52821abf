/**
 * `@paykit/testkit`: a stateful simulator of the card-payment gateway (in-process fetch handler
 * and HTTP server), its virtual clock, fault injection, test cards and request fixtures.
 *
 * @packageDocumentation
 */
export { createSimulator, testMerchantConfig } from "./simulator/create"
export type { Simulator, SimulatorOptions } from "./simulator/simulator"
export type { MerchantConfig } from "./auth/merchant"
export type { CardView, InvariantViolation, OrderView, TransactionView } from "./state/views"
export type { FaultKind, FaultRule } from "./rules/faults"
export type { CallbackAttempt } from "./callbacks/sender"
export type { CallbackConnection, CallbackResolver, CallbackTransport, ResolvedAddress } from "./callbacks/targets"
export type { RequestLimits, TestRouteAccess } from "./http/edge"
export type { RateLimit } from "./http/fair-use"
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
export { DEFAULT_LIMITS, RequestLimitsError } from "./http/edge"
export { CallbackTargetsError } from "./callbacks/targets"
export { RateLimitError } from "./http/fair-use"
export { testMerchant } from "./fixtures/test-merchant"
export { formatRequestLine, REQUEST_LOG_CAPACITY, type LoggedRequest, type RequestRecord } from "./http/request-log"
export { requests, requestsByOperation, newClientOrderId } from "./fixtures/requests"
export { testCards, magicAmounts, SLOW_CARD_DELAY_MS, CHARGEBACK_DELAY_MS, type Outcome, type TestCard } from "./rules/cards"
export type { ChargebackRefusal } from "./engine/engine"
export { CALLBACK_FIRST_DELAY_MS, CALLBACK_MAX_ATTEMPTS, CALLBACK_MAX_DELAY_MS } from "./callbacks/sender"
export type { ThreeDSStateName } from "./rules/threeds"
export { SNAPSHOT_VERSION } from "./snapshot/format"
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
} from "./snapshot/format"
