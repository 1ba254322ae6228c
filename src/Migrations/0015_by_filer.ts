import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A filer's own pages read its handoffs and their sales without scanning the catalog. GET /api/agents/{id} and
 * the owner page counted a filer's handoffs over every handoff, and the owner page listed its newest by walking
 * the whole catalog backwards (1.5 s each at 1,000,000 handoffs, however few the filer had), then summed each
 * listed handoff's sales over every receipt. The counts now come from filer_tally (migration 0011); the listing
 * and the sums from these indexes. Neither names a column a sale or a payout updates, so those updates stay HOT.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // As in 0007: building indexes on a large catalog takes longer than one request's statement may.
  yield* sql`SET LOCAL statement_timeout = 0`
  yield* sql`CREATE INDEX handoffs_filer ON handoffs (filer_did, seq DESC)`
  yield* sql`CREATE INDEX receipts_sales_by_handoff ON receipts (handoff_seq) WHERE kind = 'sale'`
})
