import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A handoff's sale count lives in handoff_sales alone (migration 0007's narrow table), no longer in a column of
 * the handoff's own row. A sale updated `handoffs.purchases`: a new version of a row of about 2 kB, which on a
 * page without room for it (three such rows fill a page at fillfactor 85) is not a HOT update and writes an entry
 * into each of the table's eleven indexes, the two GIN indexes with fastupdate off included (a few dozen entries
 * for the search vector alone), and then the mirror into handoff_sales on top. On a bench catalog of 100,000,
 * 36 % of the sales' updates were not HOT; `pgbench` of `desk_unlock` alone went from 2,100 to 2,390 sales a
 * second with the count kept here, and the bench's unlock + body from 599-634 to 704-706 unlocks a second.
 *
 * The tallies follow: a change of a sale count (a sale, a row removed before its handoff) moves the books'
 * purchases and each of the handoff's tags' unlocks by the difference, as the handoff's trigger did for a sale; a
 * change of a handoff's tags, cost, filer or demo flag moves its whole part with the count read under the count's
 * row lock. That lock orders a tag edit and a sale of the same handoff: the edit waits for a sale in progress and
 * reads its count after it, or the sale waits for the edit and reads its new tags; either way no unlock is counted
 * under tags the handoff no longer has.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // As in 0007: a large catalog's mend takes longer than one request's statement may.
  yield* sql`SET LOCAL statement_timeout = 0`
  // Nothing sells or edits a handoff while the count moves; the mend below reads what the mirror kept. receipts
  // first: a sale already writing (an older desk's, on the old functions) finishes before the count moves, rather
  // than waiting on handoffs behind this lock and then failing on the dropped column.
  yield* sql`LOCK TABLE receipts, handoffs, handoff_sales IN SHARE ROW EXCLUSIVE MODE`

  // The mirror kept them equal; a row it missed (none should be) is mended from the column before it goes.
  yield* sql`INSERT INTO handoff_sales AS s (handoff_seq, sales) SELECT seq, purchases FROM handoffs
    ON CONFLICT (handoff_seq) DO UPDATE SET sales = excluded.sales WHERE s.sales <> excluded.sales`
  yield* sql`ALTER TABLE handoff_sales ADD CONSTRAINT handoff_sales_sales_check CHECK (sales >= 0)`

  yield* sql`DROP TRIGGER handoffs_mirror_sales ON handoffs`
  yield* sql`DROP TRIGGER handoffs_tally_change ON handoffs`
  yield* sql`DROP FUNCTION desk_mirror_sales()`

  // Every handoff has its count from its filing on, at 0; a bulk seed pays one insert, not one per row.
  yield* sql.unsafe(`CREATE FUNCTION start_sales() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO handoff_sales (handoff_seq, sales) SELECT seq, 0 FROM filed;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER handoffs_sales_started AFTER INSERT ON handoffs
    REFERENCING NEW TABLE AS filed FOR EACH STATEMENT EXECUTE FUNCTION start_sales()`

  // The one receipt writer (0013), counting a purchase in handoff_sales.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION record_receipt(n new_receipt) RETURNS receipts LANGUAGE plpgsql AS $$
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
        UPDATE handoff_sales SET sales = sales + 1 WHERE handoff_seq = n.handoff_seq;
      END IF;
      IF n.payout IS NOT NULL THEN
        INSERT INTO payouts (receipt_id, filer_did, amount_micro, to_address, status, from_block)
        VALUES (r.receipt_id, r.filer_did, r.filer_micro, r.payout_address, n.payout, n.from_block);
      END IF;
      RETURN r;
    END $$`)

  // A count's change: the books' purchases and the handoff's tags' unlocks move by the difference.
  yield* sql.unsafe(`CREATE FUNCTION tally_sales() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delta bigint;
      tagged text[];
      demo boolean;
    BEGIN
      delta := CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE NEW.sales END
        - CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE OLD.sales END;
      IF delta = 0 THEN RETURN NULL; END IF;
      SELECT tags, is_demo INTO tagged, demo FROM handoffs
        WHERE seq = CASE WHEN TG_OP = 'DELETE' THEN OLD.handoff_seq ELSE NEW.handoff_seq END;
      IF NOT FOUND OR demo THEN RETURN NULL; END IF;
      INSERT INTO books_tally (purchases) VALUES (delta);
      INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
        SELECT tag, 0, count(*) * delta, 0 FROM unnest(tagged) AS tag GROUP BY tag;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER handoff_sales_tally AFTER INSERT OR DELETE OR UPDATE OF sales ON handoff_sales
    FOR EACH ROW EXECUTE FUNCTION tally_sales()`

  // 0020's part of one handoff, with its count passed in.
  yield* sql`DROP FUNCTION tally_handoff(handoffs, int)`
  yield* sql.unsafe(`CREATE FUNCTION tally_handoff(h handoffs, sold bigint, sign int) RETURNS void
    LANGUAGE plpgsql AS $$
    BEGIN
      IF h.is_demo THEN RETURN; END IF;
      INSERT INTO books_tally (handoffs, purchases) VALUES (sign, sign * sold);
      INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
        SELECT tag, sign * count(*), sign * count(*) * sold, sign * count(*) * h.reconstruct_micro
        FROM unnest(h.tags) AS tag GROUP BY tag;
      PERFORM count_filer(h.filer_did, sign);
    END $$`)
  // A handoff changed or removed: its part out as it was and in as it is, with its count read under the count's
  // row lock. A handoff is removed after its handoff_sales row (the foreign key), whose removal took its count out.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION tally_changed_handoff() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      sold bigint;
    BEGIN
      SELECT sales INTO sold FROM handoff_sales WHERE handoff_seq = OLD.seq FOR UPDATE;
      sold := coalesce(sold, 0);
      PERFORM tally_handoff(OLD, sold, -1);
      IF TG_OP = 'UPDATE' THEN PERFORM tally_handoff(NEW, sold, 1); END IF;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER handoffs_tally_change AFTER UPDATE OF tags, reconstruct_micro, is_demo, filer_did
    ON handoffs FOR EACH ROW
    WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.reconstruct_micro IS DISTINCT FROM NEW.reconstruct_micro
      OR OLD.is_demo IS DISTINCT FROM NEW.is_demo OR OLD.filer_did IS DISTINCT FROM NEW.filer_did)
    EXECUTE FUNCTION tally_changed_handoff()`

  // 0011's filing tally: a handoff is filed with no sales.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION tally_filed_handoffs() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE fresh bigint;
    BEGIN
      WITH up AS (
        INSERT INTO filer_tally AS f (filer_did, handoffs)
          SELECT filer_did, count(*) FROM new_rows WHERE NOT is_demo GROUP BY filer_did ORDER BY filer_did
          ON CONFLICT (filer_did) DO UPDATE SET handoffs = f.handoffs + excluded.handoffs
          RETURNING (xmax = 0) AS fresh
      ) SELECT count(*) FILTER (WHERE up.fresh) INTO fresh FROM up;
      INSERT INTO books_tally (handoffs, filers)
        SELECT count(*), fresh FROM new_rows WHERE NOT is_demo HAVING count(*) > 0;
      INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
        SELECT tag, count(*), 0, sum(reconstruct_micro)
        FROM new_rows, unnest(tags) AS tag WHERE NOT is_demo GROUP BY tag;
      RETURN NULL;
    END $$`)

  yield* sql`ALTER TABLE handoffs DROP COLUMN purchases`
})
