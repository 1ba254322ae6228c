import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The tables whose rows triggers count, list or announce; TRUNCATE fires none of those triggers. */
export const COUNTED_TABLES = ["handoffs", "receipts", "feedback"] as const

/**
 * TRUNCATE of a table whose rows the desk keeps derived state of is refused. It fires no row trigger, so the
 * kept counters (0011, 0017), the tag listing (0019) and the vote counts (0018) would go on counting rows that
 * are gone, and no desk would hear that its cached previews are (0012): a handoff filed afterwards under a seq set
 * back was served with the truncated one's title, price and filer by a desk that had cached it. Deleting the rows
 * keeps all of them exact.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'TRUNCATE % is refused: it skips the triggers that keep the desk''s counters, tag listing and '
        'cached previews exact', TG_TABLE_NAME
        USING HINT = 'DELETE the rows instead (the triggers then keep everything exact), or drop the database';
    END $$`)
  for (const table of COUNTED_TABLES) {
    yield* sql.unsafe(`CREATE TRIGGER ${table}_not_truncated BEFORE TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate()`)
  }
})
