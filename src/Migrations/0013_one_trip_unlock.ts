import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The receipt writer and the desk-receipt unlock as functions, so an unlock is one round trip instead of seven
 * (BEGIN, lock, three reads and writes, the receipt, COMMIT). Each statement of a plpgsql function reads a fresh
 * snapshot, so what `desk_unlock` reads after taking the payer's row lock includes everything committed under
 * that lock before it (an x402 claim, another unlock), exactly as the transaction it replaces did.
 *
 * `record_receipt` is the one receipt writer for both rails (src/Ledger/ReceiptRepo.ts): the receipt, with the
 * filer's payout address as registered now unless given, the purchase counted when the rules say so, and the
 * payout row when the share is to move on-chain. Both take the receipt as `new_receipt`, the fields of
 * src/Ledger/ReceiptRow.ts NewReceipt.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TYPE new_receipt AS (
    receipt_id text, handoff_seq bigint, payer text, filer_did text, price_micro bigint, filer_micro bigint,
    desk_micro bigint, kind text, mode text, network text, payment_tx_hash text, payment_payer_address text,
    payment_nonce text, payment_chain_id bigint, payment_log_index integer, payout_status text, payout_address text,
    counts_as_purchase boolean, payout text, from_block bigint
  )`
  yield* sql.unsafe(`CREATE FUNCTION record_receipt(n new_receipt) RETURNS receipts LANGUAGE plpgsql AS $$
    DECLARE
      r receipts;
    BEGIN
      INSERT INTO receipts (receipt_id, handoff_seq, payer, filer_did, price_micro, filer_micro, desk_micro, kind,
        mode, network, payment_tx_hash, payment_payer_address, payment_nonce, payment_chain_id, payment_log_index,
        payout_status, payout_address)
      VALUES (n.receipt_id, n.handoff_seq, n.payer, n.filer_did, n.price_micro, n.filer_micro, n.desk_micro, n.kind,
        n.mode, n.network, n.payment_tx_hash, n.payment_payer_address, n.payment_nonce, n.payment_chain_id,
        n.payment_log_index, n.payout_status,
        coalesce(n.payout_address, (SELECT payout_address FROM agents WHERE id = n.filer_did)))
      RETURNING * INTO r;
      IF n.counts_as_purchase THEN
        UPDATE handoffs SET purchases = purchases + 1 WHERE seq = n.handoff_seq;
      END IF;
      IF n.payout IS NOT NULL THEN
        INSERT INTO payouts (receipt_id, filer_did, amount_micro, to_address, status, from_block)
        VALUES (r.receipt_id, r.filer_did, r.filer_micro, r.payout_address, n.payout, n.from_block);
      END IF;
      RETURN r;
    END $$`)
  // Under the payer's row lock: a repeat unlock finds the first receipt, an x402 payment still settling for the
  // same unlock stops it, and the spend is added only within the cap. The outcome names which; the receipt and
  // the payer's row come back as JSON for the caller to decode.
  yield* sql.unsafe(`CREATE FUNCTION desk_unlock(p_spend_micro bigint, n new_receipt) RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE
      a agents;
      r receipts;
    BEGIN
      INSERT INTO agents (id) VALUES (n.payer) ON CONFLICT (id) DO UPDATE SET id = excluded.id RETURNING * INTO a;
      SELECT * INTO r FROM receipts WHERE payer = n.payer AND handoff_seq = n.handoff_seq;
      IF FOUND THEN
        RETURN jsonb_build_object('outcome', 'unlocked', 'receipt', to_jsonb(r));
      END IF;
      IF EXISTS (SELECT 1 FROM settlements
          WHERE payer = n.payer AND handoff_seq = n.handoff_seq AND status <> 'failed') THEN
        RETURN jsonb_build_object('outcome', 'settling');
      END IF;
      IF p_spend_micro > 0 THEN
        UPDATE agents SET spent_micro = spent_micro + p_spend_micro, updated_at = now()
          WHERE id = n.payer AND spent_micro + p_spend_micro <= spend_cap_micro;
        IF NOT FOUND THEN
          RETURN jsonb_build_object('outcome', 'over_cap', 'agent', to_jsonb(a));
        END IF;
      END IF;
      RETURN jsonb_build_object('outcome', 'recorded', 'receipt', to_jsonb(record_receipt(n)));
    END $$`)
})
