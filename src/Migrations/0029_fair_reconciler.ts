import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The reconciler takes the pending claims tried least recently first (src/Ledger/SettlementRepo.ts `stale`):
 * by seq, the oldest twenty claims that the chain has not decided were taken again every round, and a claim
 * behind them (a buyer charged on-chain whose answer was lost) was never looked at. Every attempt, lease and
 * release stamps `updated_at`, so a claim just tried goes to the back.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The index by seq stays: dropping it takes an exclusive lock on settlements, which would wait behind any reader
  // (a pg_dump holds one for the whole dump) and hold every desk's settlement statements behind it meanwhile.
  yield* sql`CREATE INDEX settlements_pending_by_turn ON settlements (updated_at, seq) WHERE status = 'pending'`
})
