import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Desk-receipt unlocks that arrive together are written by one statement and one commit
 * (src/Ledger/ReceiptRepo.ts boards them): `pgbench` of fresh payers on a copy of the bench catalog, 16 clients,
 * one unlock a transaction 1,600-1,900 a second, eight a transaction 4,100-4,400 (a commit and a statement each,
 * not the rows, were most of an unlock's cost).
 *
 * `desk_unlock_batch` answers each unlock as `desk_unlock` (0013, 0024) did alone, as if they had run one after
 * another in handoff order (concurrent requests have no order of their own): a repeat finds the first receipt, a
 * payment settling stops it, the spend is added within the cap, a payer this call registered is removed again
 * when it bought nothing; the answers come back in the order given. Its locks are taken in one
 * order whatever the batch holds, so two batches never wait on each other in a circle: every payer's row first
 * (registered where new), in id order, then the unlocks in handoff order (the handoff's count in `handoff_sales`
 * is the one row two payers' unlocks share). A payer's tally row (`buyer_tally`) is taken later, under its
 * payer's row lock, which every writer of a payer's receipt holds first. A failure fails the whole statement and
 * writes nothing; when the database reported it, the desk then runs each unlock of the batch alone (not when the
 * answer was lost: the batch may have been committed; src/Ledger/ReceiptRepo.ts).
 *
 * `desk_unlock` stays, as the batch of one, for desks not yet restarted on this version.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION desk_unlock_batch(p_spends bigint[], ns new_receipt[]) RETURNS jsonb[]
    LANGUAGE plpgsql AS $$
    DECLARE
      outcomes jsonb[] := array_fill(NULL::jsonb, ARRAY[cardinality(ns)]);
      created text[] := '{}';
      fresh boolean;
      who text;
      i integer;
      n new_receipt;
      a agents;
      r receipts;
    BEGIN
      IF cardinality(p_spends) IS DISTINCT FROM cardinality(ns) THEN
        RAISE EXCEPTION 'desk_unlock_batch: % spends for % receipts', cardinality(p_spends), cardinality(ns);
      END IF;
      FOR who IN SELECT DISTINCT u.payer FROM unnest(ns) AS u ORDER BY u.payer LOOP
        -- A row this statement inserted has no xmax; one it found and locked has this transaction's.
        INSERT INTO agents (id) VALUES (who) ON CONFLICT (id) DO UPDATE SET id = excluded.id
          RETURNING (xmax = 0) INTO fresh;
        IF fresh THEN
          created := created || who;
        END IF;
      END LOOP;
      FOR i IN SELECT k FROM generate_subscripts(ns, 1) AS k ORDER BY (ns[k]).handoff_seq, k LOOP
        n := ns[i];
        SELECT * INTO r FROM receipts WHERE payer = n.payer AND handoff_seq = n.handoff_seq;
        IF FOUND THEN
          outcomes[i] := jsonb_build_object('outcome', 'unlocked', 'receipt', to_jsonb(r));
          CONTINUE;
        END IF;
        IF EXISTS (SELECT 1 FROM settlements
            WHERE payer = n.payer AND handoff_seq = n.handoff_seq AND status <> 'failed') THEN
          outcomes[i] := jsonb_build_object('outcome', 'settling');
          CONTINUE;
        END IF;
        IF p_spends[i] > 0 THEN
          UPDATE agents SET spent_micro = spent_micro + p_spends[i], updated_at = now()
            WHERE id = n.payer AND spent_micro + p_spends[i] <= spend_cap_micro;
          IF NOT FOUND THEN
            SELECT * INTO a FROM agents WHERE id = n.payer;
            outcomes[i] := jsonb_build_object('outcome', 'over_cap', 'agent', to_jsonb(a));
            CONTINUE;
          END IF;
        END IF;
        outcomes[i] := jsonb_build_object('outcome', 'recorded', 'receipt', to_jsonb(record_receipt(n)));
      END LOOP;
      -- A refusal writes nothing (0024): a payer registered here that holds no receipt now bought nothing.
      DELETE FROM agents g WHERE g.id = ANY(created) AND NOT EXISTS (SELECT 1 FROM receipts WHERE payer = g.id);
      RETURN outcomes;
    END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION desk_unlock(p_spend_micro bigint, n new_receipt) RETURNS jsonb
    LANGUAGE plpgsql AS $$
    BEGIN
      RETURN (desk_unlock_batch(ARRAY[p_spend_micro], ARRAY[n]))[1];
    END $$`)
})
