/**
 * One ledger per order (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger): pure, immutable, and at the bottom of the package.
 *
 * @packageDocumentation
 */
export * from "./types"
export { RULES, totalsOf, limitOf, holds } from "./rules"
export { openLedger, reserve, commit, release, settle, hasEntry, returnOpFor } from "./ledger"
export { checkInvariants } from "./invariants"
