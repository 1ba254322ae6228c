import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A payout-address change is signed over a time, not a nonce, so a signature stayed valid for its whole
 * 10-minute window: after A -> B -> A, whoever saw the first request could send it again and move the payouts
 * back to B. The desk keeps the signed time of the last change and takes only later ones (src/Identity.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agents ADD COLUMN payout_signed_at timestamptz`
})
