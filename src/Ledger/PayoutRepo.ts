import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"

export const PayoutRow = Schema.Struct({
  receipt_id: Schema.String,
  filer_did: Schema.String,
  amount_micro: DbInt,
  to_address: Schema.NullOr(Schema.String),
  status: Schema.Literal("owed", "pending", "signed", "sent", "failed"),
  signed_tx: Schema.NullOr(Schema.String),
  tx_hash: Schema.NullOr(Schema.String),
  tx_nonce: Schema.NullOr(DbInt),
  attempts: DbInt
})
export type PayoutRow = typeof PayoutRow.Type

export interface NewPayout {
  readonly receiptId: string
  readonly filerDid: string
  readonly amountMicro: number
  /** The filer's address when the receipt was written; the payout goes there even if it changes later. */
  readonly toAddress: string | null
  /** Owed: no address yet, or no desk wallet to pay from. */
  readonly status: "owed" | "pending"
}

/**
 * The outbox. Each write also sets the receipt's filerPayoutStatus (pending while signed), so a receipt
 * never disagrees with its payout; callers run these inside one transaction.
 */
const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = (payout: NewPayout) =>
    sql`INSERT INTO payouts (receipt_id, filer_did, amount_micro, to_address, status)
      VALUES (${payout.receiptId}, ${payout.filerDid}, ${payout.amountMicro}, ${payout.toAddress}, ${payout.status})`

  /** Owed payouts that can now be paid: to the address of the receipt, or the one the filer registered since. */
  const promoteOwed = Effect.gen(function*() {
    const promoted = yield* sql`UPDATE payouts p SET to_address = coalesce(p.to_address, a.payout_address),
        status = 'pending', next_attempt_at = now(), updated_at = now()
      FROM agents a WHERE p.status = 'owed' AND a.id = p.filer_did
        AND (p.to_address IS NOT NULL OR a.payout_address IS NOT NULL)
      RETURNING p.receipt_id`
    yield* sql`UPDATE receipts r SET payout_status = 'pending', payout_address = p.to_address
      FROM payouts p WHERE p.receipt_id = r.receipt_id AND p.status = 'pending' AND r.payout_status = 'owed'`
    return promoted.length
  })

  /** Takes the next due payout and holds it for `leaseSeconds`, skipping rows another desk process holds. */
  const claimDue = SqlSchema.findOne({
    Request: Schema.Number,
    Result: PayoutRow,
    execute: (leaseSeconds) =>
      sql`UPDATE payouts SET next_attempt_at = now() + ${leaseSeconds} * interval '1 second', updated_at = now()
        WHERE receipt_id = (
          SELECT receipt_id FROM payouts
          WHERE status IN ('pending', 'signed', 'failed') AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED
        )
        RETURNING receipt_id, filer_did, amount_micro, to_address, status, signed_tx, tx_hash, tx_nonce, attempts`
  })

  const receiptStatus = (receiptId: string, status: "pending" | "sent" | "failed", txHash: string | null) =>
    sql`UPDATE receipts SET payout_status = ${status}, payout_tx_hash = ${txHash} WHERE receipt_id = ${receiptId}`

  const storeSigned = (receiptId: string, signedTx: string, txHash: string, txNonce: number) =>
    Effect.zipRight(
      sql`UPDATE payouts SET status = 'signed', signed_tx = ${signedTx}, tx_hash = ${txHash}, tx_nonce = ${txNonce},
          updated_at = now() WHERE receipt_id = ${receiptId}`,
      receiptStatus(receiptId, "pending", null)
    )

  const markSent = (receiptId: string, txHash: string) =>
    Effect.zipRight(
      sql`UPDATE payouts SET status = 'sent', last_error = NULL, updated_at = now() WHERE receipt_id = ${receiptId}`,
      receiptStatus(receiptId, "sent", txHash)
    )

  /** Keeps any signed transaction: the retry re-broadcasts it unless it can no longer land. */
  const markFailed = (receiptId: string, error: string, retryInSeconds: number) =>
    Effect.zipRight(
      sql`UPDATE payouts SET status = 'failed', attempts = attempts + 1, last_error = ${error.slice(0, 500)},
          next_attempt_at = now() + ${retryInSeconds} * interval '1 second', updated_at = now()
        WHERE receipt_id = ${receiptId}`,
      receiptStatus(receiptId, "failed", null)
    )

  /** Only for a transaction that can never be mined (reverted, or its nonce went to another transaction). */
  const discardSigned = (receiptId: string) =>
    sql`UPDATE payouts SET signed_tx = NULL, tx_hash = NULL, tx_nonce = NULL, updated_at = now()
      WHERE receipt_id = ${receiptId}`

  const retryLater = (receiptId: string, retryInSeconds: number) =>
    sql`UPDATE payouts SET next_attempt_at = now() + ${retryInSeconds} * interval '1 second', updated_at = now()
      WHERE receipt_id = ${receiptId}`

  const find = SqlSchema.findOne({
    Request: Schema.String,
    Result: PayoutRow,
    execute: (receiptId) =>
      sql`SELECT receipt_id, filer_did, amount_micro, to_address, status, signed_tx, tx_hash, tx_nonce, attempts
        FROM payouts WHERE receipt_id = ${receiptId}`
  })

  return {
    insert: (payout: NewPayout) => insert(payout),
    promoteOwed: Effect.orDie(promoteOwed),
    claimDue: (leaseSeconds: number) => Effect.orDie(claimDue(leaseSeconds)),
    storeSigned: (receiptId: string, signedTx: string, txHash: string, txNonce: number) =>
      Effect.orDie(storeSigned(receiptId, signedTx, txHash, txNonce)),
    markSent: (receiptId: string, txHash: string) => Effect.orDie(markSent(receiptId, txHash)),
    markFailed: (receiptId: string, error: string, retryInSeconds: number) =>
      Effect.orDie(markFailed(receiptId, error, retryInSeconds)),
    discardSigned: (receiptId: string) => Effect.orDie(discardSigned(receiptId)),
    retryLater: (receiptId: string, retryInSeconds: number) => Effect.orDie(retryLater(receiptId, retryInSeconds)),
    find: (receiptId: string) => Effect.orDie(find(receiptId))
  } as const
})

export class PayoutRepo extends Context.Tag("PayoutRepo")<PayoutRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(PayoutRepo, make)
}
