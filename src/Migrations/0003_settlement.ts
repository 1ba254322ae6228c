import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per x402 payment, written (with the spend reserved) before any settlement is attempted, so a
  // crash between settling and the receipt leaves a row to reconcile against the token's authorizationState.
  yield* sql`CREATE SEQUENCE settlement_seq`
  yield* sql`CREATE TABLE settlements (
    seq bigint PRIMARY KEY DEFAULT nextval('settlement_seq'),
    payer text NOT NULL REFERENCES agents (id),
    handoff_seq bigint NOT NULL REFERENCES handoffs (seq),
    price_micro bigint NOT NULL CHECK (price_micro >= 1),
    spend_micro bigint NOT NULL CHECK (spend_micro >= 0),
    x402_version integer NOT NULL CHECK (x402_version IN (1, 2)),
    payer_address text NOT NULL,
    nonce text NOT NULL,
    valid_before bigint NOT NULL,
    from_block bigint NOT NULL,
    payment jsonb NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
    tx_hash text,
    failure_reason text,
    receipt_id text REFERENCES receipts (receipt_id),
    lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (payer_address, nonce),
    CHECK (status <> 'settled' OR (tx_hash IS NOT NULL AND receipt_id IS NOT NULL))
  )`
  // One live claim per identity and handoff: a second payment for an unlock in flight is never settled.
  yield* sql`CREATE UNIQUE INDEX settlements_one_claim ON settlements (payer, handoff_seq) WHERE status <> 'failed'`
  yield* sql`CREATE INDEX settlements_pending ON settlements (seq) WHERE status = 'pending'`

  // The payout outbox: written in the receipt's transaction; the signed transaction and its hash are
  // stored before broadcasting, so a restart re-broadcasts the same transaction instead of paying twice.
  yield* sql`CREATE TABLE payouts (
    receipt_id text PRIMARY KEY REFERENCES receipts (receipt_id),
    filer_did text NOT NULL,
    amount_micro bigint NOT NULL CHECK (amount_micro >= 1),
    to_address text,
    status text NOT NULL CHECK (status IN ('owed', 'pending', 'signed', 'sent', 'failed')),
    signed_tx text,
    tx_hash text,
    tx_nonce bigint,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (status = 'owed' OR to_address IS NOT NULL),
    CHECK ((signed_tx IS NULL) = (tx_hash IS NULL)),
    CHECK (status <> 'sent' OR tx_hash IS NOT NULL)
  )`
  yield* sql`CREATE INDEX payouts_due ON payouts (next_attempt_at) WHERE status IN ('pending', 'signed', 'failed')`
  yield* sql`CREATE INDEX payouts_owed ON payouts (filer_did) WHERE status = 'owed'`
  // Backstop: one transaction can settle only one payout.
  yield* sql`CREATE UNIQUE INDEX payouts_one_tx ON payouts (tx_hash) WHERE tx_hash IS NOT NULL`
})
