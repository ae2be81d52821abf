/**
 * Migration 3: the intent protocol's fencing (docs/fleet.md#the-intent-protocol). `sends_end_by` is
 * the moment by which every send under a key has ended, so a proof that a call did not land waits
 * out the processing window from its last send, not from the intent's creation. `paykit_order_leases`
 * holds one lease per `orderid`: across a fleet, calls on one order run one at a time, from the
 * order's snapshot to the call's proof (docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet). Only adds, so an older
 * PayKit keeps working beside it during a rolling deploy.
 *
 * @packageDocumentation
 */

/** The SQL of migration 3. */
export const sql = `
ALTER TABLE paykit_intents ADD COLUMN sends_end_by bigint;

CREATE TABLE paykit_order_leases (
  orderid     text PRIMARY KEY CHECK (length(orderid) BETWEEN 1 AND 64),
  holder_key  text NOT NULL,
  owner       text NOT NULL,
  token       bigint NOT NULL,
  lease_until bigint NOT NULL
);
`
