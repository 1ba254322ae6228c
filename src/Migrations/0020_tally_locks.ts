import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A buyer's and a filer's kept counts (buyer_tally, filer_tally, migration 0011) lost increments on PostgreSQL. A
 * decrement ran `UPDATE ... SET sales = sales - 1 WHERE payer = ... AND sales > 1`: under READ COMMITTED the
 * UPDATE tests `sales > 1` against the row as its snapshot saw it (1) and passes over it without waiting for a sale
 * that has raised it to 2 and not committed yet; the `DELETE` that followed did wait for that sale, re-checked only
 * the payer, and deleted the row with both sales in it. Every payout write names `payout_status`, so the receipts'
 * trigger took one of the buyer's sales out and back in beside its next purchase (a test racing 60 buyers' second
 * unlocks with their first sales' payout writes left 4-13 of them one short); a tag edit of a filer's only handoff
 * beside its next filing did the same to filer_tally. A decrement now locks the row first, which waits for any
 * writer holding it and reads the row as that writer left it, and then lowers or deletes it.
 *
 * The receipts' trigger also no longer fires for an update that leaves every column it counts as it was (a payout
 * worker's `pending` written again): its out-and-in moved nothing but rows. Counts a lost increment left short are
 * mended once, with the books' buyers and filers.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // As in 0007: the mend's count of a large ledger takes longer than one request's statement may.
  yield* sql`SET LOCAL statement_timeout = 0`
  // Nothing writes receipts or handoffs (another desk still on the old functions) while the counts are mended.
  yield* sql`LOCK TABLE receipts, handoffs IN SHARE ROW EXCLUSIVE MODE`

  yield* sql.unsafe(
    keptCount({ name: "count_buyer", table: "buyer_tally", key: "payer", count: "sales", books: "buyers" })
  )
  yield* sql.unsafe(
    keptCount({ name: "count_filer", table: "filer_tally", key: "filer_did", count: "handoffs", books: "filers" })
  )

  // 0011's functions with the buyer's and the filer's counts kept by the two above.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION tally_receipt(r receipts, sign int) RETURNS void LANGUAGE plpgsql AS $$
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
      PERFORM count_buyer(r.payer, sign);
    END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION tally_handoff(h handoffs, sign int) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF h.is_demo THEN RETURN; END IF;
      INSERT INTO books_tally (handoffs, purchases) VALUES (sign, sign * h.purchases);
      INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
        SELECT tag, sign * count(*), sign * count(*) * h.purchases, sign * count(*) * h.reconstruct_micro
        FROM unnest(h.tags) AS tag GROUP BY tag;
      PERFORM count_filer(h.filer_did, sign);
    END $$`)

  // 0017's trigger, now only for updates that change a column it counts.
  yield* sql`DROP TRIGGER receipts_tally ON receipts`
  yield* sql`CREATE TRIGGER receipts_tally AFTER INSERT OR DELETE ON receipts
    FOR EACH ROW EXECUTE FUNCTION tally_receipts()`
  yield* sql`CREATE TRIGGER receipts_tally_changed
    AFTER UPDATE OF kind, payer, filer_did, price_micro, filer_micro, desk_micro, mode, payout_status, created_at
    ON receipts FOR EACH ROW
    WHEN (OLD.kind IS DISTINCT FROM NEW.kind OR OLD.payer IS DISTINCT FROM NEW.payer
      OR OLD.filer_did IS DISTINCT FROM NEW.filer_did OR OLD.price_micro IS DISTINCT FROM NEW.price_micro
      OR OLD.filer_micro IS DISTINCT FROM NEW.filer_micro OR OLD.desk_micro IS DISTINCT FROM NEW.desk_micro
      OR OLD.mode IS DISTINCT FROM NEW.mode OR OLD.payout_status IS DISTINCT FROM NEW.payout_status
      OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION tally_receipts()`

  yield* mendCounts
})

/**
 * A function that moves one agent's kept count by `sign`: +1 makes or raises its row, -1 lowers it or, at its
 * last, deletes it, under the row's lock. The books count the agents with a row (`books`).
 */
const keptCount = (kept: {
  readonly name: string
  readonly table: string
  readonly key: string
  readonly count: string
  readonly books: string
}) =>
  `CREATE FUNCTION ${kept.name}(who text, sign int) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE held bigint; fresh boolean;
    BEGIN
      IF sign > 0 THEN
        INSERT INTO ${kept.table} AS t (${kept.key}, ${kept.count}) VALUES (who, 1)
          ON CONFLICT (${kept.key}) DO UPDATE SET ${kept.count} = t.${kept.count} + 1
          RETURNING (xmax = 0) INTO fresh;
        IF fresh THEN INSERT INTO books_tally (${kept.books}) VALUES (1); END IF;
        RETURN;
      END IF;
      SELECT ${kept.count} INTO held FROM ${kept.table} WHERE ${kept.key} = who FOR UPDATE;
      IF held > 1 THEN
        UPDATE ${kept.table} SET ${kept.count} = ${kept.count} - 1 WHERE ${kept.key} = who;
      ELSE
        DELETE FROM ${kept.table} WHERE ${kept.key} = who;
        INSERT INTO books_tally (${kept.books}) VALUES (-1);
      END IF;
    END $$`

/** buyer_tally and filer_tally made equal to a count of the rows, and the books' buyers and filers with them. */
export const mendCounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO buyer_tally AS b (payer, sales)
    SELECT payer, count(*) FROM receipts WHERE kind = 'sale' GROUP BY payer
    ON CONFLICT (payer) DO UPDATE SET sales = excluded.sales WHERE b.sales <> excluded.sales`
  yield* sql`DELETE FROM buyer_tally b
    WHERE NOT EXISTS (SELECT 1 FROM receipts r WHERE r.payer = b.payer AND r.kind = 'sale')`
  yield* sql`INSERT INTO filer_tally AS f (filer_did, handoffs)
    SELECT filer_did, count(*) FROM handoffs WHERE NOT is_demo GROUP BY filer_did
    ON CONFLICT (filer_did) DO UPDATE SET handoffs = excluded.handoffs WHERE f.handoffs <> excluded.handoffs`
  yield* sql`DELETE FROM filer_tally f
    WHERE NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.filer_did = f.filer_did AND NOT h.is_demo)`
  yield* sql`INSERT INTO books_tally (buyers, filers)
    SELECT (SELECT count(*) FROM buyer_tally) - coalesce(sum(buyers), 0),
      (SELECT count(*) FROM filer_tally) - coalesce(sum(filers), 0)
    FROM books_tally`
})
