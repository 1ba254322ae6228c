import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { Claim, PaidReceipt, SentPayout } from "../Domain/LedgerSnapshot.ts"

/** What the audit compares with the chain: every x402 receipt, every claim and every payout, read as they are. */
const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const receipts = SqlSchema.findAll({
    Request: Schema.Void,
    Result: PaidReceipt,
    execute: () =>
      sql`SELECT receipt_id, price_micro, payment_chain_id, payment_tx_hash, payment_log_index, payment_payer_address,
          payment_nonce
        FROM receipts WHERE mode = 'x402' ORDER BY seq`
  })

  const claims = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Claim,
    execute: () =>
      sql`SELECT payer_address, nonce, price_micro, status, failure_reason, receipt_id, from_block FROM settlements ORDER BY seq`
  })

  const payouts = SqlSchema.findAll({
    Request: Schema.Void,
    Result: SentPayout,
    execute: () =>
      sql`SELECT receipt_id, amount_micro, to_address, status, tx_hash, from_block FROM payouts ORDER BY receipt_id`
  })

  /** Read from one snapshot, so the three agree with each other while desks keep writing. */
  const snapshot = sql.withTransaction(
    Effect.zipRight(
      sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`,
      Effect.all({ receipts: receipts(undefined), claims: claims(undefined), payouts: payouts(undefined) })
    )
  )

  return { snapshot: Effect.orDie(snapshot) } as const
})

export class AuditRepo extends Context.Tag("AuditRepo")<AuditRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(AuditRepo, make)
}
