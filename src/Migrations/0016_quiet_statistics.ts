import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * No statistics for the handoff columns no statement filters, joins or sorts by: the sealed body and the
 * preview's prose. ANALYZE (src/PlannerStatistics.ts) still samples their rows, but no longer keeps and sorts
 * each value for a histogram nobody reads. ANALYZE of the embedded bench's 17,000 handoffs: 664 -> 413-432 ms.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE handoffs
    ALTER COLUMN body SET STATISTICS 0,
    ALTER COLUMN title SET STATISTICS 0,
    ALTER COLUMN teaser SET STATISTICS 0,
    ALTER COLUMN why_pay SET STATISTICS 0,
    ALTER COLUMN contains SET STATISTICS 0,
    ALTER COLUMN does_not_contain SET STATISTICS 0,
    ALTER COLUMN provenance SET STATISTICS 0`
})
