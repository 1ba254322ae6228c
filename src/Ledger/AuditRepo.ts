import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { Claim, PaidReceipt, SentPayout } from "../Domain/LedgerSnapshot.ts"

/**
 * The address a claim's buyer paid: the `payTo` of the requirements stored with it (x402 v1 and v2 name it alike),
 * so receipts paid before a change of DESK_PAY_TO, or by another desk of the database, are checked against theirs.
 */
const PAY_TO = "s.payment->'requirements'->>'payTo'"

/** What the audit compares with the chain: every x402 receipt, every claim and every payout, read as they are. */
const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const receipts = SqlSchema.findAll({
    Request: Schema.Void,
    Result: PaidReceipt,
    execute: () =>
      sql`SELECT r.receipt_id, r.price_micro, r.payment_chain_id, r.payment_tx_hash, r.payment_log_index,
          r.payment_payer_address, r.payment_nonce, ${sql.literal(PAY_TO)} AS pay_to
        FROM receipts r LEFT JOIN settlements s ON s.receipt_id = r.receipt_id WHERE r.mode = 'x402' ORDER BY r.seq`
  })

  const claims = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Claim,
    execute: () =>
      sql`SELECT payer_address, nonce, price_micro, status, failure_reason, receipt_id, from_block, ${
        sql.literal(PAY_TO)
      } AS pay_to
        FROM settlements s ORDER BY seq`
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
