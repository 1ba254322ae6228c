import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import type { SignedPayout } from "../Payouts/Rail.ts"

export const PayoutRow = Schema.Struct({
  receipt_id: Schema.String,
  filer_did: Schema.String,
  amount_micro: DbInt,
  to_address: Schema.NullOr(Schema.String),
  status: Schema.Literal("owed", "pending", "signed", "sent", "failed"),
  signed_tx: Schema.NullOr(Schema.String),
  tx_hash: Schema.NullOr(Schema.String),
  tx_nonce: Schema.NullOr(DbInt),
  attempts: DbInt,
  from_block: Schema.NullOr(DbInt)
})
export type PayoutRow = typeof PayoutRow.Type

/** A payout claimed by one worker: every later write names the token, and a worker whose token is gone writes nothing. */
export interface Lease {
  readonly row: PayoutRow
  readonly token: string
}

const Held = Schema.Struct({ receipt_id: Schema.String })

/**
 * The outbox. Each write also sets the receipt's filerPayoutStatus (pending while signed) in the same statement,
 * so a receipt never disagrees with its payout. Every write after a claim is fenced: it names the claim's lease
 * token and never touches a `sent` payout, and answers whether it still held the lease.
 */
const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns =
    sql`receipt_id, filer_did, amount_micro, to_address, status, signed_tx, tx_hash, tx_nonce, attempts, from_block`

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

  /** Takes the next due payout under a new lease token, skipping rows another worker (of any desk) holds. */
  const claimDue = SqlSchema.findOne({
    Request: Schema.Struct({ leaseSeconds: Schema.Number, token: Schema.String }),
    Result: PayoutRow,
    execute: ({ leaseSeconds, token }) =>
      sql`UPDATE payouts SET next_attempt_at = now() + ${leaseSeconds} * interval '1 second', lease_token = ${token},
          updated_at = now()
        WHERE receipt_id = (
          SELECT receipt_id FROM payouts
          WHERE status IN ('pending', 'signed', 'failed') AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED
        )
        RETURNING ${columns}`
  })

  const fenced = (lease: Lease) =>
    sql`receipt_id = ${lease.row.receipt_id} AND lease_token = ${lease.token} AND status <> 'sent'`

  /** The payout update, and the receipt's status with it, only while the lease is held. */
  const write = (
    lease: Lease,
    set: Statement.Statement<unknown>,
    receipt: Statement.Statement<unknown> | null
  ) =>
    SqlSchema.findAll({
      Request: Schema.Void,
      Result: Held,
      execute: () =>
        receipt === null
          ? sql`UPDATE payouts SET ${set}, updated_at = now() WHERE ${fenced(lease)} RETURNING receipt_id`
          : sql`WITH p AS (UPDATE payouts SET ${set}, updated_at = now() WHERE ${fenced(lease)} RETURNING receipt_id),
              r AS (UPDATE receipts SET ${receipt} WHERE receipt_id IN (SELECT receipt_id FROM p))
            SELECT receipt_id FROM p`
    })(undefined).pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)

  const seconds = (n: number) => sql`now() + ${n} * interval '1 second'`

  return {
    promoteOwed: Effect.orDie(sql.withTransaction(promoteOwed)),
    claimDue: (leaseSeconds: number, token: string) => Effect.orDie(claimDue({ leaseSeconds, token })),
    renew: (lease: Lease, leaseSeconds: number) => write(lease, sql`next_attempt_at = ${seconds(leaseSeconds)}`, null),
    /** Stored before the broadcast: after a crash the worker finds these bytes and sends them again. */
    storeSigned: (lease: Lease, signed: SignedPayout) =>
      write(
        lease,
        sql`status = 'signed', signed_tx = ${signed.signedTx}, tx_hash = ${signed.txHash}, tx_nonce = ${signed.txNonce}`,
        sql`payout_status = 'pending', payout_tx_hash = NULL`
      ),
    /** `txHash` is the stored transaction's, or a mined one found by its reference (whose bytes were not kept). */
    markSent: (lease: Lease, txHash: string) =>
      write(
        lease,
        sql`status = 'sent', last_error = NULL, lease_token = NULL, tx_hash = ${txHash},
          signed_tx = CASE WHEN tx_hash = ${txHash} THEN signed_tx END`,
        sql`payout_status = 'sent', payout_tx_hash = ${txHash}`
      ),
    /** Keeps any signed transaction: the retry re-broadcasts it unless it can no longer land. */
    markFailed: (lease: Lease, error: string, retryInSeconds: number) =>
      write(
        lease,
        sql`status = 'failed', attempts = attempts + 1, last_error = ${error.slice(0, 500)}, lease_token = NULL,
          next_attempt_at = ${seconds(retryInSeconds)}`,
        sql`payout_status = 'failed', payout_tx_hash = NULL`
      ),
    /** Only for a transaction that can never be mined (reverted, or its nonce went to another transaction). */
    discardSigned: (lease: Lease) => write(lease, sql`signed_tx = NULL, tx_hash = NULL, tx_nonce = NULL`, null),
    retryLater: (lease: Lease, retryInSeconds: number) =>
      write(lease, sql`lease_token = NULL, next_attempt_at = ${seconds(retryInSeconds)}`, null)
  } as const
})

export class PayoutRepo extends Context.Tag("PayoutRepo")<PayoutRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(PayoutRepo, make)
}
