/**
 * One ledger per order (docs/decisions.md#10-an-orders-lifecycle-is-one-ledger): pure, immutable, and at the bottom of the package.
 *
 * @packageDocumentation
 */
export * from "./types"
export { RULES, ORIGINALS, CONDITION_TEXT, totalsOf, limitOf, holds, originalOf, type Condition, type Limit, type Rule } from "./rules"
export { openLedger, reserve, commit, release, settle, hasEntry, returnOpFor, type Reservation } from "./ledger"
export { checkInvariants } from "./invariants"
