import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every change of a handoff is announced on the `handoff_changed` channel with its seq, from the changing
 * transaction itself (PostgreSQL delivers it at commit, never for a rollback): desks sharing the database drop
 * their cached preview of it (src/Catalog/PreviewCache.ts). New rows need none: misses are never cached.
 * Since migration 0014 a sale (an update of `purchases` alone) is not announced: the cache reads counts itself.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION notify_handoff_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('handoff_changed', OLD.seq::text);
      RETURN NULL;
    END $$`)
  // Every updated row, even one left as it was: dropping a cached preview too often costs a read, too seldom a stale one.
  yield* sql`CREATE TRIGGER handoffs_changed_notice AFTER UPDATE ON handoffs FOR EACH ROW
    EXECUTE FUNCTION notify_handoff_changed()`
  yield* sql`CREATE TRIGGER handoffs_removed_notice AFTER DELETE ON handoffs FOR EACH ROW
    EXECUTE FUNCTION notify_handoff_changed()`
})
