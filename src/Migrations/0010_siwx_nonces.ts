import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Sign-In-With-X proofs read a body once: a nonce is kept until its message would be refused as too old anyway,
  // so the table holds a few minutes of sign-ins whatever the traffic.
  yield* sql`CREATE TABLE siwx_nonces (nonce text PRIMARY KEY, accepted_until timestamptz NOT NULL)`
  yield* sql`CREATE INDEX siwx_nonces_by_age ON siwx_nonces (accepted_until)`
  // An agent may choose that its id alone reads no bodies: only a sign-in by the wallet that paid does.
  yield* sql`ALTER TABLE agents ADD COLUMN require_sign_in boolean NOT NULL DEFAULT false`
  // The receipts a wallet's payments bought, for a sign-in by that wallet.
  yield* sql`CREATE INDEX receipts_by_wallet ON receipts (payment_payer_address, handoff_seq)
    WHERE payment_payer_address IS NOT NULL`
})
