/**
 * PayKit contracts: everything generated from `spec/openapi.yaml`.
 *
 * - `paths`, `components`, `operations` (openapi-typescript wire types) under the `Wire` namespace;
 * - Effect Schemas for every request and response schema (`SaleRequest`, `StatusResponse`, …) and
 *   the `schemas` registry;
 * - the operation table (`operations`, `operationIds`, `controlCodes`) and `operationSchemas`.
 *
 * @packageDocumentation
 */
export * from "./operations"
export * from "./generated/schemas"
export { operationSchemas } from "./generated/operation-schemas"
export * as Wire from "./generated/openapi"
export type { paths, components } from "./generated/openapi"
