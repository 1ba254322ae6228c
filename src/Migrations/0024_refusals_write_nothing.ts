import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An unlock refused for the spend cap writes nothing. `desk_unlock` (0013) registers its payer under the row lock
 * before it checks the cap, and a refusal returned rather than raised, so a new payer refused (a price above the
 * default cap) was left registered: `GET /api/agents/:id` then answered 200 for an identity that had done nothing.
 * Now the payer's row is removed again on a refusal when this call created it. Only the refusal pays the extra
 * statements; every other path is the statements it was.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION desk_unlock(p_spend_micro bigint, n new_receipt) RETURNS jsonb
    LANGUAGE plpgsql AS $$
    DECLARE
      a agents;
      created boolean;
      r receipts;
    BEGIN
      -- A row this statement inserted has no xmax; one it found and locked has this transaction's.
      INSERT INTO agents (id) VALUES (n.payer) ON CONFLICT (id) DO UPDATE SET id = excluded.id
        RETURNING (xmax = 0) INTO created;
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
          SELECT * INTO a FROM agents WHERE id = n.payer;
          IF created THEN
            DELETE FROM agents WHERE id = n.payer;
          END IF;
          RETURN jsonb_build_object('outcome', 'over_cap', 'agent', to_jsonb(a));
        END IF;
      END IF;
      RETURN jsonb_build_object('outcome', 'recorded', 'receipt', to_jsonb(record_receipt(n)));
    END $$`)
})
