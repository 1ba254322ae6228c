import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Kept counters for one agent's pages (GET /api/agents/{id}, GET /agents/{id}), which summed the agent's receipts:
 * a filer with 100,800 sales cost 260-470 ms a request on either, a buyer of 99,958 handoffs 300-410 ms on its
 * owner page. The receipts' trigger (0011) now also writes each receipt's part as a signed delta row into
 * receipt_agent_delta, a plain insert that never waits on another sale (a row per popular filer would be updated by
 * every sale of its handoffs at once). `foldTallies` folds the deltas into agent_days, one row per agent and UTC
 * day of activity, filer_payouts, one row per filer and payout status, and handoff_earnings, one row per handoff
 * sold (the owner page's sales and earnings per filing summed each listed handoff's sales: 138 ms for a filer of 42
 * handoffs sold 2,400 times each). A read sums its rows with the deltas not folded yet, in one statement: exact at
 * every commit, however far the fold is behind.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // As in 0007: the backfill of a large ledger takes longer than one request's statement may.
  yield* sql`SET LOCAL statement_timeout = 0`
  yield* sql`CREATE TABLE receipt_agent_delta (
    handoff_seq bigint NOT NULL, payer text NOT NULL, filer_did text NOT NULL, day date NOT NULL, kind text NOT NULL,
    payout_status text NOT NULL, sign int NOT NULL, price_micro bigint NOT NULL, filer_micro bigint NOT NULL
  )`
  // `sales` counts the agent's sales on both sides (bought and sold), `receipts` the receipts of every kind it holds.
  yield* sql`CREATE TABLE agent_days (
    agent_did text NOT NULL, day date NOT NULL, sales bigint NOT NULL, spent_micro bigint NOT NULL,
    earned_micro bigint NOT NULL, receipts bigint NOT NULL, PRIMARY KEY (agent_did, day)
  )`
  yield* sql`CREATE TABLE filer_payouts (
    filer_did text NOT NULL, payout_status text NOT NULL, sales bigint NOT NULL, filer_micro bigint NOT NULL,
    PRIMARY KEY (filer_did, payout_status)
  )`
  yield* sql`CREATE TABLE handoff_earnings (
    handoff_seq bigint PRIMARY KEY, sales bigint NOT NULL, filer_micro bigint NOT NULL
  )`

  // 0011's trigger function with one delta row more per receipt it counts in or out.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION tally_receipts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        PERFORM tally_receipt(OLD, -1);
        INSERT INTO receipt_agent_delta VALUES (OLD.handoff_seq, OLD.payer, OLD.filer_did,
          (OLD.created_at AT TIME ZONE 'UTC')::date, OLD.kind, OLD.payout_status, -1, OLD.price_micro, OLD.filer_micro);
      END IF;
      IF TG_OP <> 'DELETE' THEN
        PERFORM tally_receipt(NEW, 1);
        INSERT INTO receipt_agent_delta VALUES (NEW.handoff_seq, NEW.payer, NEW.filer_did,
          (NEW.created_at AT TIME ZONE 'UTC')::date, NEW.kind, NEW.payout_status, 1, NEW.price_micro, NEW.filer_micro);
      END IF;
      RETURN NULL;
    END $$`)
  // The columns the new counters read are added to those the trigger watches.
  yield* sql`DROP TRIGGER receipts_tally ON receipts`
  yield* sql`CREATE TRIGGER receipts_tally AFTER INSERT OR DELETE
    OR UPDATE OF kind, payer, filer_did, price_micro, filer_micro, desk_micro, mode, payout_status, created_at
    ON receipts FOR EACH ROW EXECUTE FUNCTION tally_receipts()`

  // The trigger holds the receipts' lock until this migration commits: nothing changes under the backfill.
  yield* backfillAgentTallies
})

/** agent_days, filer_payouts and handoff_earnings recomputed from the receipts; they and the deltas must be empty. */
export const backfillAgentTallies = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO agent_days (agent_did, day, sales, spent_micro, earned_micro, receipts)
    SELECT agent_did, day, sum(sales), sum(spent_micro), sum(earned_micro), sum(receipts) FROM (
      SELECT payer AS agent_did, (created_at AT TIME ZONE 'UTC')::date AS day, (kind = 'sale')::int AS sales,
        CASE WHEN kind = 'sale' THEN price_micro ELSE 0 END AS spent_micro, 0 AS earned_micro, 1 AS receipts
      FROM receipts
      UNION ALL
      SELECT filer_did, (created_at AT TIME ZONE 'UTC')::date, 1, 0, filer_micro, 0 FROM receipts WHERE kind = 'sale'
    ) AS sides GROUP BY agent_did, day`
  yield* sql`INSERT INTO filer_payouts (filer_did, payout_status, sales, filer_micro)
    SELECT filer_did, payout_status, count(*), sum(filer_micro) FROM receipts WHERE kind = 'sale'
    GROUP BY filer_did, payout_status`
  yield* sql`INSERT INTO handoff_earnings (handoff_seq, sales, filer_micro)
    SELECT handoff_seq, count(*), sum(filer_micro) FROM receipts WHERE kind = 'sale' GROUP BY handoff_seq`
})
