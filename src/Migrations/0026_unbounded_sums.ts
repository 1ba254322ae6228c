import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The kept sums of amounts had bigint columns: 9.2e18 micro-USDC, about 9,223 sales at the largest price, which
 * desk receipts let anyone record for free (a buyer raises its own cap). Each sale adds a delta row, so sales went
 * on, but past it the fold of the deltas (src/Ledger/Tallies.ts) failed every second for good: the deltas piled up
 * and every read of the books summed more of them. numeric holds any sum exactly; one sale's amounts stay bigint.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A rewrite of each table: as in 0007, a large ledger takes longer than one request's statement may.
  yield* sql`SET LOCAL statement_timeout = 0`
  yield* sql`ALTER TABLE books_tally ALTER COLUMN volume_micro TYPE numeric, ALTER COLUMN filer_micro TYPE numeric,
    ALTER COLUMN desk_micro TYPE numeric, ALTER COLUMN on_chain_micro TYPE numeric,
    ALTER COLUMN ledger_only_micro TYPE numeric, ALTER COLUMN filer_paid_on_chain_micro TYPE numeric,
    ALTER COLUMN filer_owed_micro TYPE numeric, ALTER COLUMN filer_ledger_micro TYPE numeric`
  yield* sql`ALTER TABLE agent_days ALTER COLUMN spent_micro TYPE numeric, ALTER COLUMN earned_micro TYPE numeric`
  yield* sql`ALTER TABLE filer_payouts ALTER COLUMN filer_micro TYPE numeric`
  yield* sql`ALTER TABLE handoff_earnings ALTER COLUMN filer_micro TYPE numeric`
})
