import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * A sale is no longer announced on `handoff_changed`: PostgreSQL lets one notifying transaction commit at a
 * time (a database-wide lock from the notice's queueing to the end of the commit), so a NOTIFY in every sale
 * made every sale on the database wait its turn (pgbench of `desk_unlock` with fresh payers, 8 clients on 2
 * cores: 889-916 sales committed per second with the notice, 1,061-1,159 without). The preview cache reads the purchase count of the
 * previews it serves in its barrier statement instead (src/Catalog/PreviewCache.ts), so it needs no word of a
 * sale; everything else about a handoff it still hears of.
 *
 * The notice now fires for updates that name any stored column but `purchases`; the one statement that sells
 * (record_receipt, migration 0013) names only that. A migration that adds a column to handoffs runs
 * `renewChangeNotice` after adding it: a test compares the trigger's columns with the table's.
 */
export default Effect.suspend(() => renewChangeNotice)

const Column = Schema.Struct({ name: Schema.String })

/** Every stored column of handoffs but the purchase count (an update of a generated one names its sources). */
export const noticeColumns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT attname AS name FROM pg_attribute
    WHERE attrelid = 'handoffs'::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
      AND attname <> 'purchases'
    ORDER BY attnum`
  return Schema.decodeUnknownSync(Schema.Array(Column))(rows).map((_) => _.name)
})

/** The change notice, made again to fire for updates naming any of `noticeColumns` as the table has them now. */
export const renewChangeNotice = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = yield* noticeColumns
  yield* sql`DROP TRIGGER IF EXISTS handoffs_changed_notice ON handoffs`
  yield* sql.unsafe(
    `CREATE TRIGGER handoffs_changed_notice AFTER UPDATE OF ${
      columns.map((name) => `"${name}"`).join(", ")
    } ON handoffs FOR EACH ROW EXECUTE FUNCTION notify_handoff_changed()`
  )
})
