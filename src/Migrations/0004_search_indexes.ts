import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // GIN's fast-update list is scanned in full by every search until VACUUM merges it: a few thousand filings
  // made a one-word search at 1,000,000 handoffs 100 times slower (0.1 ms to 10 ms). Filings are rare, searches
  // are not, so filings pay to update the index in place.
  for (const index of ["handoffs_search", "handoffs_tags"]) {
    yield* sql`ALTER INDEX ${sql(index)} SET (fastupdate = off)`
    yield* sql`SELECT gin_clean_pending_list(${index}::regclass)`
  }
})
