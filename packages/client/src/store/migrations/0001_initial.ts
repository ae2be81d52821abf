/**
 * Migration 1: intents, callback claims and OAuth nonces. Times are epoch milliseconds (nonces:
 * epoch seconds, as OAuth has them) written by the instance that makes the call. No column holds a
 * card number, a CVV, a key or a control digest; a callback is known only by the SHA-256 of its
 * query. Never edit a released migration: add the next file (the runner refuses a changed one).
 *
 * @packageDocumentation
 */

/** The SQL of migration 1. */
export const sql = `
CREATE TABLE paykit_intents (
  idempotency_key text PRIMARY KEY CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  operation       text NOT NULL,
  client_orderid  text NOT NULL,
  orderid         text,
  amount          text CHECK (amount ~ '^(0|[1-9][0-9]*)(\\.[0-9]+)?$'),
  currency        text CHECK (currency ~ '^[A-Z]{3}$'),
  endpoint        text NOT NULL,
  created_at      bigint NOT NULL,
  owner           text NOT NULL,
  lease_until     bigint NOT NULL,
  attempts        integer NOT NULL DEFAULT 1,
  outcome_kind    text CHECK (outcome_kind IN ('Returned', 'Failed')),
  outcome_status  text,
  outcome_error   text,
  outcome_orderid text,
  outcome_data    jsonb,
  finished_at     bigint,
  CHECK ((outcome_kind IS NULL) = (finished_at IS NULL)),
  CHECK (outcome_kind IS DISTINCT FROM 'Returned' OR outcome_status IS NOT NULL),
  CHECK (outcome_kind IS DISTINCT FROM 'Failed' OR outcome_error IS NOT NULL)
);

-- recover(): the oldest unfinished intents first.
CREATE INDEX paykit_intents_unfinished ON paykit_intents (created_at) WHERE finished_at IS NULL;
-- purge() and operators looking an order up.
CREATE INDEX paykit_intents_finished ON paykit_intents (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX paykit_intents_client_orderid ON paykit_intents (client_orderid);

CREATE TABLE paykit_callbacks (
  query_sha256 text PRIMARY KEY CHECK (query_sha256 ~ '^[0-9a-f]{64}$'),
  owner        text NOT NULL,
  lease_until  bigint NOT NULL,
  attempts     integer NOT NULL DEFAULT 1,
  created_at   bigint NOT NULL,
  completed_at bigint
);
CREATE INDEX paykit_callbacks_completed ON paykit_callbacks (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE paykit_nonces (
  consumer_key text NOT NULL,
  nonce        text NOT NULL,
  expires_at   bigint NOT NULL,
  PRIMARY KEY (consumer_key, nonce)
);
CREATE INDEX paykit_nonces_expires ON paykit_nonces (expires_at);
`
