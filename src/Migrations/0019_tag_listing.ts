import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A listing by one tag alone (src/Catalog/Search.ts) reads its page from `tag_listing`: a row per tag of each
 * handoff but the demo, with the keys of the two sorts the spec shows (newest first, savings first), each in an
 * index that starts with the tag. A page N results in is then a walk of N entries of that tag (index-only once
 * the table is vacuumed), not a walk of the catalog's order past every handoff without the tag, nor a read and
 * sort of every handoff with it: at 1,000,000 handoffs a page 10,000 results into a tag took 0.7-1.1 s of
 * PostgreSQL (a tag of 2.5 % and one of 15 %, either sort), and 3-6 ms from this table. Triggers keep it in each
 * change's transaction, exact at every commit: a handoff gets its rows at filing, and an operator may still edit
 * or delete one. What it costs at 1,000,000 handoffs (3.2 tags each): 468 MB of table and indexes.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // As in 0007: the backfill of a large catalog takes longer than one request's statement may.
  yield* sql`SET LOCAL statement_timeout = 0`
  yield* sql`CREATE TABLE tag_listing (
    tag text NOT NULL, seq bigint NOT NULL, filed_at timestamptz NOT NULL, savings_micro bigint NOT NULL
  )`

  // Filings arrive one by one, and in batches of thousands from the bench loader and seeding: one pass each.
  yield* sql.unsafe(`CREATE FUNCTION list_filed_tags() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO tag_listing (tag, seq, filed_at, savings_micro)
        SELECT DISTINCT tag, seq, filed_at, savings_micro FROM new_rows, unnest(tags) AS tag WHERE NOT is_demo;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER handoffs_tags_listed AFTER INSERT ON handoffs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_filed_tags()`

  // An edited or deleted handoff: its old rows found by their own index keys, the new ones written.
  yield* sql.unsafe(`CREATE FUNCTION relist_tags() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM tag_listing WHERE tag = ANY(OLD.tags) AND filed_at = OLD.filed_at AND seq = OLD.seq;
      IF TG_OP = 'UPDATE' AND NOT NEW.is_demo THEN
        INSERT INTO tag_listing (tag, seq, filed_at, savings_micro)
          SELECT DISTINCT tag, NEW.seq, NEW.filed_at, NEW.savings_micro FROM unnest(NEW.tags) AS tag;
      END IF;
      RETURN NULL;
    END $$`)
  // savings_micro is generated from the two amounts: an update names those.
  yield* sql`CREATE TRIGGER handoffs_tags_relisted AFTER UPDATE OF tags, is_demo, filed_at, price_micro,
    reconstruct_micro, seq ON handoffs FOR EACH ROW
    WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR OLD.is_demo IS DISTINCT FROM NEW.is_demo
      OR OLD.filed_at IS DISTINCT FROM NEW.filed_at OR OLD.savings_micro IS DISTINCT FROM NEW.savings_micro
      OR OLD.seq IS DISTINCT FROM NEW.seq)
    EXECUTE FUNCTION relist_tags()`
  yield* sql`CREATE TRIGGER handoffs_tags_unlisted AFTER DELETE ON handoffs
    FOR EACH ROW EXECUTE FUNCTION relist_tags()`

  // The trigger above holds the handoffs' lock until this migration commits: nothing is filed under the backfill.
  yield* backfill
  // Built after the backfill, in one pass each: a million handoffs' rows entered one by one took far longer.
  yield* sql`CREATE INDEX tag_listing_recent ON tag_listing (tag, filed_at DESC, seq DESC)`
  yield* sql`CREATE INDEX tag_listing_savings ON tag_listing (tag, savings_micro DESC, seq DESC)`
  // Planned without statistics, a tag's page read every row of the tag and sorted them (a second at 1,000,000
  // handoffs); the desk's own pass (src/PlannerStatistics.ts) would come to the table only later.
  yield* sql`ANALYZE tag_listing`
})

/** The listing rebuilt from the handoffs; the table must be empty. */
export const backfill = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql`INSERT INTO tag_listing (tag, seq, filed_at, savings_micro)
    SELECT DISTINCT tag, seq, filed_at, savings_micro FROM handoffs, unnest(tags) AS tag WHERE NOT is_demo`
)
