/**
 * Migration 2: the order as it was before a call on an existing order was sent (`before_snapshot`,
 * the gateway's figures only: statuses, transaction type, serial number, amounts; no card data),
 * and whether the caller promised to record it before sending (`before_required`). With both,
 * `recover()` proves the outcome of a capture, return or void that a dead instance left unfinished
 * instead of leaving it unknown. Only adds columns, so an older PayKit keeps working beside it.
 *
 * @packageDocumentation
 */

/** The SQL of migration 2. */
export const sql = `
ALTER TABLE paykit_intents ADD COLUMN before_snapshot jsonb;
ALTER TABLE paykit_intents ADD COLUMN before_required boolean NOT NULL DEFAULT false;
`
