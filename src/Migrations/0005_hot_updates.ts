import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Every sale updates its handoff's purchases. On a full page that update writes a new entry into each of the
  // table's indexes, the two GIN indexes included; with room left on the page it is a heap-only (HOT) update.
  // Applies to pages written from now on; VACUUM FULL repacks older ones.
  yield* sql`ALTER TABLE handoffs SET (fillfactor = 85)`
})
