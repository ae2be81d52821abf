/**
 * The checking proxy: forwards to a real gateway (or answers from a recording) and checks every
 * exchange against the spec. See the testkit README, "Checking a real gateway: the proxy".
 *
 * @packageDocumentation
 */
export { startProxy, ProxyOptionsError, type CheckingProxy, type ProxyOptions } from "./server"
export { checkReply, checkRequest, formatMismatch, type CheckedRequest, type Mismatch, type MismatchKind } from "./check"
export { CALLBACK_PATH, checkCallback } from "./callback-relay"
export { EXCHANGE_LOG_CAPACITY, formatExchangeLines, type ExchangeRecord } from "./exchange-log"
export { parseRecording, readRecording, RecordingFormatError, RECORDING_HEADER, type RecordedExchange } from "./recording"
