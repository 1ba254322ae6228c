import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The client's payment id (x402 payment-identifier extension): one claim per id, whatever authorizations a
  // retrying client signs under it, so a retry returns the first outcome and never settles a second payment.
  yield* sql`ALTER TABLE settlements ADD COLUMN payment_id text`
  yield* sql`CREATE UNIQUE INDEX settlements_one_payment_id ON settlements (payment_id)`
})
