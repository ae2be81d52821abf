/**
 * One ledger per order (DESIGN.md decision 10): pure, immutable, and at the bottom of the package.
 *
 * @packageDocumentation
 */
export * from "./types"
export { RULES, ORIGINALS, CONDITION_TEXT, totalsOf, limitOf, holds, originalOf, type Condition, type Limit, type Rule } from "./rules"
export { openLedger, reserve, commit, release, settle, hasEntry, returnOpFor, type Reservation } from "./ledger"
export { checkInvariants } from "./invariants"
