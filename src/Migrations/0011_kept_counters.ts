import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Kept counters for /api/books and /api/demand, which scanned every handoff and receipt. Triggers write them in
 * the transaction of the change itself, so they are exact at every commit. books_tally and tag_tally take
 * deltas as new rows (inserts never wait on each other, so unlocks do not queue on one hot row) and are
 * folded by `compactTallies`; buyer_tally and filer_tally keep one row per buyer and filer for the distinct
 * counts. The owed statuses are those of src/Ledger/Rules.ts OWED.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE books_tally (
    receipts bigint NOT NULL DEFAULT 0, volume_micro bigint NOT NULL DEFAULT 0,
    filer_micro bigint NOT NULL DEFAULT 0, desk_micro bigint NOT NULL DEFAULT 0,
    on_chain_micro bigint NOT NULL DEFAULT 0, ledger_only_micro bigint NOT NULL DEFAULT 0,
    filer_paid_on_chain_micro bigint NOT NULL DEFAULT 0, on_chain_payouts bigint NOT NULL DEFAULT 0,
    filer_owed_micro bigint NOT NULL DEFAULT 0, filer_ledger_micro bigint NOT NULL DEFAULT 0,
    buyers bigint NOT NULL DEFAULT 0, handoffs bigint NOT NULL DEFAULT 0,
    filers bigint NOT NULL DEFAULT 0, purchases bigint NOT NULL DEFAULT 0
  )`
  yield* sql`CREATE TABLE tag_tally (
    tag text NOT NULL, packets bigint NOT NULL, unlocks bigint NOT NULL, reconstruct_micro numeric NOT NULL
  )`
  yield* sql`CREATE TABLE buyer_tally (payer text PRIMARY KEY, sales bigint NOT NULL CHECK (sales > 0))`
  yield* sql`CREATE TABLE filer_tally (filer_did text PRIMARY KEY, handoffs bigint NOT NULL CHECK (handoffs > 0))`

  // One sale's part of the books, signed: +1 for a receipt that now counts, -1 for one that no longer does.
  yield* sql.unsafe(`CREATE FUNCTION tally_receipt(r receipts, sign int) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE fresh boolean;
    BEGIN
      IF r.kind <> 'sale' THEN RETURN; END IF;
      INSERT INTO books_tally (receipts, volume_micro, filer_micro, desk_micro, on_chain_micro, ledger_only_micro,
          filer_paid_on_chain_micro, on_chain_payouts, filer_owed_micro, filer_ledger_micro)
        VALUES (sign, sign * r.price_micro, sign * r.filer_micro, sign * r.desk_micro,
          CASE WHEN r.mode = 'x402' THEN sign * r.price_micro ELSE 0 END,
          CASE WHEN r.mode = 'desk' THEN sign * r.price_micro ELSE 0 END,
          CASE WHEN r.payout_status = 'sent' THEN sign * r.filer_micro ELSE 0 END,
          CASE WHEN r.payout_status = 'sent' THEN sign ELSE 0 END,
          CASE WHEN r.payout_status IN ('owed', 'pending', 'failed') THEN sign * r.filer_micro ELSE 0 END,
          CASE WHEN r.payout_status = 'ledger' THEN sign * r.filer_micro ELSE 0 END);
      IF sign > 0 THEN
        INSERT INTO buyer_tally AS b (payer, sales) VALUES (r.payer, 1)
          ON CONFLICT (payer) DO UPDATE SET sales = b.sales + 1
          RETURNING (xmax = 0) INTO fresh;
        IF fresh THEN INSERT INTO books_tally (buyers) VALUES (1); END IF;
      ELSE
        UPDATE buyer_tally SET sales = sales - 1 WHERE payer = r.payer AND sales > 1;
        IF NOT FOUND THEN
          DELETE FROM buyer_tally WHERE payer = r.payer;
          INSERT INTO books_tally (buyers) VALUES (-1);
        END IF;
      END IF;
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION tally_receipts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM tally_receipt(OLD, -1); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM tally_receipt(NEW, 1); END IF;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER receipts_tally AFTER INSERT OR DELETE
    OR UPDATE OF kind, payer, price_micro, filer_micro, desk_micro, mode, payout_status ON receipts
    FOR EACH ROW EXECUTE FUNCTION tally_receipts()`

  // Filings arrive one by one, and in batches of thousands from the bench loader and seeding: one pass each.
  yield* sql.unsafe(`CREATE FUNCTION tally_filed_handoffs() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE fresh bigint;
    BEGIN
      WITH up AS (
        INSERT INTO filer_tally AS f (filer_did, handoffs)
          SELECT filer_did, count(*) FROM new_rows WHERE NOT is_demo GROUP BY filer_did ORDER BY filer_did
          ON CONFLICT (filer_did) DO UPDATE SET handoffs = f.handoffs + excluded.handoffs
          RETURNING (xmax = 0) AS fresh
      ) SELECT count(*) FILTER (WHERE up.fresh) INTO fresh FROM up;
      INSERT INTO books_tally (handoffs, filers, purchases)
        SELECT count(*), fresh, coalesce(sum(purchases), 0) FROM new_rows WHERE NOT is_demo HAVING count(*) > 0;
      INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
        SELECT tag, count(*), coalesce(sum(purchases), 0), sum(reconstruct_micro)
        FROM new_rows, unnest(tags) AS tag WHERE NOT is_demo GROUP BY tag;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER handoffs_tally_insert AFTER INSERT ON handoffs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tally_filed_handoffs()`

  // One handoff's part of the books and of each of its tags, signed.
  yield* sql.unsafe(`CREATE FUNCTION tally_handoff(h handoffs, sign int) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE fresh boolean;
    BEGIN
      IF h.is_demo THEN RETURN; END IF;
      INSERT INTO books_tally (handoffs, purchases) VALUES (sign, sign * h.purchases);
      INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
        SELECT tag, sign * count(*), sign * count(*) * h.purchases, sign * count(*) * h.reconstruct_micro
        FROM unnest(h.tags) AS tag GROUP BY tag;
      IF sign > 0 THEN
        INSERT INTO filer_tally AS f (filer_did, handoffs) VALUES (h.filer_did, 1)
          ON CONFLICT (filer_did) DO UPDATE SET handoffs = f.handoffs + 1
          RETURNING (xmax = 0) INTO fresh;
        IF fresh THEN INSERT INTO books_tally (filers) VALUES (1); END IF;
      ELSE
        UPDATE filer_tally SET handoffs = handoffs - 1 WHERE filer_did = h.filer_did AND handoffs > 1;
        IF NOT FOUND THEN
          DELETE FROM filer_tally WHERE filer_did = h.filer_did;
          INSERT INTO books_tally (filers) VALUES (-1);
        END IF;
      END IF;
    END $$`)
  // A sale only moves purchases: that common case writes one delta per row, never touching filer_tally.
  yield* sql.unsafe(`CREATE FUNCTION tally_changed_handoff() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' AND NOT NEW.is_demo AND NOT OLD.is_demo AND OLD.tags = NEW.tags
        AND OLD.reconstruct_micro = NEW.reconstruct_micro AND OLD.filer_did = NEW.filer_did THEN
        INSERT INTO books_tally (purchases) VALUES (NEW.purchases - OLD.purchases);
        INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
          SELECT tag, 0, count(*) * (NEW.purchases - OLD.purchases), 0 FROM unnest(NEW.tags) AS tag GROUP BY tag;
      ELSE
        PERFORM tally_handoff(OLD, -1);
        IF TG_OP = 'UPDATE' THEN PERFORM tally_handoff(NEW, 1); END IF;
      END IF;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER handoffs_tally_change AFTER UPDATE OF purchases, tags, reconstruct_micro, is_demo,
    filer_did ON handoffs FOR EACH ROW
    WHEN (OLD.purchases IS DISTINCT FROM NEW.purchases OR OLD.tags IS DISTINCT FROM NEW.tags
      OR OLD.reconstruct_micro IS DISTINCT FROM NEW.reconstruct_micro OR OLD.is_demo IS DISTINCT FROM NEW.is_demo
      OR OLD.filer_did IS DISTINCT FROM NEW.filer_did)
    EXECUTE FUNCTION tally_changed_handoff()`
  yield* sql`CREATE TRIGGER handoffs_tally_delete AFTER DELETE ON handoffs
    FOR EACH ROW EXECUTE FUNCTION tally_changed_handoff()`

  // The triggers above hold their tables' locks until this migration commits: nothing changes under the backfill.
  yield* backfill
})

/** The counters recomputed from the tables; the tallies must be empty. */
export const backfill = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO buyer_tally (payer, sales) SELECT payer, count(*) FROM receipts WHERE kind = 'sale' GROUP BY payer`
  yield* sql`INSERT INTO filer_tally (filer_did, handoffs)
    SELECT filer_did, count(*) FROM handoffs WHERE NOT is_demo GROUP BY filer_did`
  yield* sql`INSERT INTO books_tally (receipts, volume_micro, filer_micro, desk_micro, on_chain_micro,
      ledger_only_micro, filer_paid_on_chain_micro, on_chain_payouts, filer_owed_micro, filer_ledger_micro, buyers)
    SELECT count(*), coalesce(sum(price_micro), 0), coalesce(sum(filer_micro), 0), coalesce(sum(desk_micro), 0),
      coalesce(sum(price_micro) FILTER (WHERE mode = 'x402'), 0),
      coalesce(sum(price_micro) FILTER (WHERE mode = 'desk'), 0),
      coalesce(sum(filer_micro) FILTER (WHERE payout_status = 'sent'), 0),
      count(*) FILTER (WHERE payout_status = 'sent'),
      coalesce(sum(filer_micro) FILTER (WHERE payout_status IN ('owed', 'pending', 'failed')), 0),
      coalesce(sum(filer_micro) FILTER (WHERE payout_status = 'ledger'), 0),
      (SELECT count(*) FROM buyer_tally)
    FROM receipts WHERE kind = 'sale'`
  // Sale counts from handoff_sales, which mirrors handoffs.purchases here (0007) and holds them alone since 0027.
  yield* sql`INSERT INTO books_tally (handoffs, filers, purchases)
    SELECT count(*), (SELECT count(*) FROM filer_tally), coalesce(sum(s.sales), 0)
    FROM handoffs h LEFT JOIN handoff_sales s ON s.handoff_seq = h.seq WHERE NOT h.is_demo`
  yield* sql`INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
    SELECT tag, count(*), coalesce(sum(s.sales), 0), sum(h.reconstruct_micro)
    FROM handoffs h LEFT JOIN handoff_sales s ON s.handoff_seq = h.seq, unnest(h.tags) AS tag
    WHERE NOT h.is_demo GROUP BY tag`
})
