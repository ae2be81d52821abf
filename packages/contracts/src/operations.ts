/**
 * The operation table without Effect: `@paykit/contracts/operations` is for consumers such as
 * `@paykit/signing` that must not load the Effect runtime.
 *
 * @packageDocumentation
 */
export type {
  AuthScheme,
  ControlAuth,
  ControlCode,
  OAuthHmacAuth,
  OAuthRsaAuth,
  OperationAuth,
  OperationSpec,
  RetryClass,
  VersionFamily
} from "./operation-types"
export {
  controlCodes,
  creatingOperationIds,
  declinableOperationIds,
  errorCodes,
  openingTransactionTypes,
  operationIds,
  operations,
  transactionTypes
} from "./generated/operations"
export type { ErrorCategory, ErrorCode, KnownTransactionType, OperationId, TransactionType } from "./generated/operations"
