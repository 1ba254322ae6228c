import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Building indexes on a large catalog takes longer than one request's statement may (DESK_STATEMENT_TIMEOUT_MS);
  // the migrations run in one transaction, so this lifts the limit for them alone.
  yield* sql`SET LOCAL statement_timeout = 0`
  // Every sort reads its page from an index, so a page costs the rows up to it (at most the 10,000 of the
  // result window), never a sort of the whole catalog. recent and savings have theirs since 0001.
  yield* sql`CREATE INDEX handoffs_price ON handoffs (price_micro ASC, seq DESC)`
  yield* sql`CREATE INDEX handoffs_reconstruct ON handoffs (reconstruct_micro DESC, seq DESC)`
  // popular: an index on handoffs.purchases would make every sale's counter update a non-HOT update, writing
  // an entry into each index of the table (both GIN indexes included). The count is mirrored, by trigger, into
  // a narrow table of its own whose one index gives the order.
  yield* sql`CREATE TABLE handoff_sales (
    handoff_seq bigint PRIMARY KEY REFERENCES handoffs (seq),
    sales integer NOT NULL
  )`
  yield* sql`INSERT INTO handoff_sales (handoff_seq, sales) SELECT seq, purchases FROM handoffs`
  yield* sql`CREATE INDEX handoff_sales_rank ON handoff_sales (sales DESC, handoff_seq DESC)`
  yield* sql`CREATE FUNCTION desk_mirror_sales() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO handoff_sales (handoff_seq, sales) VALUES (NEW.seq, NEW.purchases)
        ON CONFLICT (handoff_seq) DO UPDATE SET sales = EXCLUDED.sales;
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER handoffs_mirror_sales AFTER INSERT OR UPDATE OF purchases ON handoffs
    FOR EACH ROW EXECUTE FUNCTION desk_mirror_sales()`
  // A buyer's own receipts, newest first (GET /api/receipts?payer=).
  yield* sql`CREATE INDEX receipts_payer ON receipts (payer, seq DESC)`
})
