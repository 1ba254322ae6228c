import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE agents (
    id text PRIMARY KEY,
    payout_address text,
    spend_cap_micro bigint NOT NULL DEFAULT 10000000,
    spent_micro bigint NOT NULL DEFAULT 0 CHECK (spent_micro >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (spent_micro <= spend_cap_micro)
  )`
  yield* sql`CREATE SEQUENCE receipt_seq`
  // kind: sale counts in totals and spend; demo (the sandbox packet) and self (a filer's own) do not.
  yield* sql`CREATE TABLE receipts (
    seq bigint PRIMARY KEY DEFAULT nextval('receipt_seq'),
    receipt_id text NOT NULL UNIQUE,
    handoff_seq bigint NOT NULL REFERENCES handoffs (seq),
    payer text NOT NULL REFERENCES agents (id),
    filer_did text NOT NULL,
    price_micro bigint NOT NULL CHECK (price_micro >= 1),
    filer_micro bigint NOT NULL CHECK (filer_micro >= 0),
    desk_micro bigint NOT NULL CHECK (desk_micro >= 0),
    kind text NOT NULL CHECK (kind IN ('sale', 'demo', 'self')),
    mode text NOT NULL CHECK (mode IN ('desk', 'x402')),
    network text NOT NULL,
    payment_tx_hash text,
    payment_payer_address text,
    payment_nonce text UNIQUE,
    payout_status text NOT NULL CHECK (payout_status IN ('owed', 'pending', 'sent', 'failed', 'zero')),
    payout_address text,
    payout_tx_hash text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (payer, handoff_seq),
    CHECK (filer_micro + desk_micro = price_micro)
  )`
  yield* sql`CREATE INDEX receipts_filer ON receipts (filer_did, seq DESC)`
  yield* sql`CREATE INDEX receipts_recent ON receipts (seq DESC) WHERE kind = 'sale'`
  yield* sql`CREATE TABLE feedback (
    handoff_seq bigint NOT NULL REFERENCES handoffs (seq),
    agent_id text NOT NULL REFERENCES agents (id),
    useful boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (handoff_seq, agent_id)
  )`
})
