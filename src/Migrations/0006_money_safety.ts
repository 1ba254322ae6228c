import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // A paid unlock is backed by one token Transfer log, named by chain, transaction and log index: no two
  // settlements or receipts, on any desk sharing this database, can be backed by the same one.
  yield* sql`ALTER TABLE settlements ADD COLUMN chain_id bigint, ADD COLUMN log_index integer,
    ADD COLUMN settle_attempts integer NOT NULL DEFAULT 0`
  yield* sql`CREATE UNIQUE INDEX settlements_one_transfer ON settlements (chain_id, tx_hash, log_index)
    WHERE log_index IS NOT NULL`
  // A claim left pending by an earlier version may have been broadcast: no facilitator refusal may end it.
  yield* sql`UPDATE settlements SET settle_attempts = 1 WHERE status = 'pending'`
  yield* sql`ALTER TABLE receipts ADD COLUMN payment_chain_id bigint, ADD COLUMN payment_log_index integer`
  yield* sql`CREATE UNIQUE INDEX receipts_one_transfer ON receipts (payment_chain_id, payment_tx_hash, payment_log_index)
    WHERE payment_log_index IS NOT NULL`

  // `ledger`: a desk-receipt sale moves no USDC, so its filer share is recorded and never paid on-chain.
  yield* sql`ALTER TABLE receipts DROP CONSTRAINT receipts_payout_status_check`
  yield* sql`ALTER TABLE receipts ADD CONSTRAINT receipts_payout_status_check
    CHECK (payout_status IN ('ledger', 'owed', 'pending', 'sent', 'failed', 'zero'))`
  yield* sql`UPDATE receipts SET payout_status = 'ledger' WHERE mode = 'desk' AND payout_status = 'owed'`
  // Self-purchases and the demo packet owe the filer nothing: the desk keeps the whole price.
  yield* sql`UPDATE receipts SET filer_micro = 0, desk_micro = price_micro, payout_status = 'zero' WHERE kind <> 'sale'`
  yield* sql`ALTER TABLE receipts ADD CONSTRAINT receipts_status_agrees CHECK (
    (payout_status = 'zero') = (filer_micro = 0) AND (kind = 'sale' OR filer_micro = 0)
    AND (payout_status <> 'ledger' OR mode = 'desk'))`

  // Fenced leases: each claim of a payout takes a new token, and every later write names it.
  yield* sql`ALTER TABLE payouts ADD COLUMN lease_token text, ADD COLUMN from_block bigint`
  // A payout found mined by its reference is sent with that transaction's hash, whose signed bytes were never kept.
  const pairs = yield* SqlSchema.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ conname: Schema.String }),
    execute: () =>
      sql`SELECT conname FROM pg_constraint
        WHERE conrelid = 'payouts'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%signed_tx IS NULL%'`
  })(undefined)
  for (const { conname } of pairs) yield* sql`ALTER TABLE payouts DROP CONSTRAINT ${sql(conname)}`
  yield* sql`ALTER TABLE payouts ADD CONSTRAINT payouts_signed_has_hash CHECK (signed_tx IS NULL OR tx_hash IS NOT NULL)`
  yield* sql`UPDATE payouts p SET from_block = s.from_block FROM settlements s WHERE s.receipt_id = p.receipt_id`

  // Only buyers vote: feedback from a filer's own unlock or the demo packet is dropped and the counts redone.
  yield* sql`DELETE FROM feedback f WHERE NOT EXISTS (
    SELECT 1 FROM receipts r WHERE r.payer = f.agent_id AND r.handoff_seq = f.handoff_seq AND r.kind = 'sale')`
  yield* sql`UPDATE handoffs h SET
      useful = (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND f.useful),
      not_useful = (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND NOT f.useful)
    WHERE h.useful <> (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND f.useful)
       OR h.not_useful <> (SELECT count(*) FROM feedback f WHERE f.handoff_seq = h.seq AND NOT f.useful)`
})
