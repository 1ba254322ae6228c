import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An EIP-3009 nonce is unique per authorizing wallet, not across wallets, but a receipt's `payment_nonce` was
 * unique on its own (0002). Once a buyer's settlement was mined its nonce was public, and while its receipt was
 * still to be written (a 202 `settlement_pending`: a lost answer, a slow chain) another wallet could buy any
 * cheap handoff with an authorization of its own under that nonce: the buyer's receipt then broke the constraint,
 * and the claim was failed as a transfer already used, the buyer charged and told it was not. A nonce is now
 * unique per wallet (which is what the chain enforces), beside `receipts_one_transfer` (0006).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE receipts DROP CONSTRAINT receipts_payment_nonce_key`
  yield* sql`CREATE UNIQUE INDEX receipts_wallet_nonce ON receipts (payment_payer_address, payment_nonce)
    WHERE payment_nonce IS NOT NULL`
})
