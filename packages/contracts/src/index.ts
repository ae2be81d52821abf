/**
 * PayKit contracts: everything generated from `spec/openapi.yaml`.
 *
 * - `paths`, `components`, `operations` (openapi-typescript wire types) under the `Wire` namespace;
 * - Effect Schemas for every request and response schema (`SaleRequest`, `StatusResponse`, …) and
 *   the `schemas` registry;
 * - the operation table (`operations`, `operationIds`, `controlCodes`) and `operationSchemas`;
 *   the operation facts (`transactionTypes`, `openingTransactionTypes`, `creatingOperationIds`,
 *   `declinableOperationIds`, each row's `creates` and `declinable`);
 * - the cross-field rules of request schemas (`crossFieldRules`, `crossFieldIssues`).
 *
 * @packageDocumentation
 */
// checks the app's effect against the peer range before anything uses it
export { EFFECT_PEER_RANGE, effectVersionProblem } from "./effect-version"
export * from "./operations"
export * from "./generated/schemas"
// The Schema's type and the table's `ErrorCode` are the same union of literals (a test checks it).
export { ErrorCode } from "./generated/schemas"
export { crossFieldFilter, crossFieldIssues, structFields } from "./cross-field"
export { stringFilterRule, type StringFilterRule } from "./string-filters"
export type { CrossFieldIssue, CrossFieldRule, CrossFieldRules } from "./cross-field"
export { operationSchemas } from "./generated/operation-schemas"
export * as Wire from "./generated/openapi"
export type { paths, components } from "./generated/openapi"
