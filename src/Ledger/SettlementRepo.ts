import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import { VerifiablePayment } from "../Domain/X402.ts"
import type { TransferRef } from "../Settlement.ts"

/** How long after its authorization's expiry a claim still undecided counts as one the chain may never decide. */
const UNDECIDED_AFTER_SECONDS = 600
/** How often such a claim is tried again. */
const UNDECIDED_RETRY_SECONDS = 3600

export const SettlementRow = Schema.Struct({
  seq: DbInt,
  payer: Schema.String,
  handoff_seq: DbInt,
  price_micro: DbInt,
  spend_micro: DbInt,
  payer_address: Schema.String,
  nonce: Schema.String,
  valid_before: DbInt,
  from_block: DbInt,
  payment: VerifiablePayment,
  status: Schema.Literal("pending", "settled", "failed"),
  /** Settle attempts started: after the first, no facilitator refusal ends the claim (it may have been broadcast). */
  settle_attempts: DbInt,
  tx_hash: Schema.NullOr(Schema.String),
  failure_reason: Schema.NullOr(Schema.String),
  receipt_id: Schema.NullOr(Schema.String),
  payment_id: Schema.NullOr(Schema.String)
})
export type SettlementRow = typeof SettlementRow.Type

export const NewClaim = Schema.Struct({
  payer: Schema.String,
  handoffSeq: Schema.Number,
  priceMicro: Schema.Number,
  spendMicro: Schema.Number,
  payerAddress: Schema.String,
  nonce: Schema.String,
  validBefore: Schema.Number,
  fromBlock: Schema.BigIntFromSelf,
  payment: VerifiablePayment,
  paymentId: Schema.NullOr(Schema.String),
  leaseSeconds: Schema.Number,
  /** 1 when the caller settles right away; 0 when it first looks the authorization up. */
  settleAttempts: Schema.Number
})
export type NewClaim = typeof NewClaim.Type

const Seq = Schema.Struct({ seq: DbInt })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`seq, payer, handoff_seq, price_micro, spend_micro, payer_address, nonce, valid_before, from_block,
    payment, status, settle_attempts, tx_hash, failure_reason, receipt_id, payment_id`

  const byNonce = SqlSchema.findOne({
    Request: Schema.Struct({ payerAddress: Schema.String, nonce: Schema.String }),
    Result: SettlementRow,
    execute: ({ nonce, payerAddress }) =>
      sql`SELECT ${columns} FROM settlements WHERE payer_address = ${payerAddress} AND nonce = ${nonce}`
  })

  const byPaymentId = SqlSchema.findOne({
    Request: Schema.String,
    Result: SettlementRow,
    execute: (paymentId) => sql`SELECT ${columns} FROM settlements WHERE payment_id = ${paymentId}`
  })

  const live = SqlSchema.findOne({
    Request: Schema.Struct({ payer: Schema.String, handoffSeq: Schema.Number }),
    Result: SettlementRow,
    execute: ({ handoffSeq, payer }) =>
      sql`SELECT ${columns} FROM settlements WHERE payer = ${payer} AND handoff_seq = ${handoffSeq} AND status <> 'failed'`
  })

  /** The claim is born leased, so the reconciler leaves it to the request that is about to settle it. */
  const insert = SqlSchema.single({
    Request: NewClaim,
    Result: SettlementRow,
    execute: (claim) =>
      sql`INSERT INTO settlements (payer, handoff_seq, price_micro, spend_micro, x402_version, payer_address, nonce,
          valid_before, from_block, payment, status, settle_attempts, lease_until, payment_id)
        VALUES (${claim.payer}, ${claim.handoffSeq}, ${claim.priceMicro}, ${claim.spendMicro}, ${claim.payment.x402Version},
          ${claim.payerAddress}, ${claim.nonce}, ${claim.validBefore}, ${claim.fromBlock.toString()},
          ${JSON.stringify(claim.payment)}::jsonb, 'pending', ${claim.settleAttempts},
          now() + ${claim.leaseSeconds} * interval '1 second', ${claim.paymentId})
        RETURNING ${columns}`
  })

  /** One settlement attempt at a time per claim, across processes: whoever holds the lease may settle. */
  const lease = SqlSchema.findOne({
    Request: Schema.Struct({ seq: Schema.Number, seconds: Schema.Number }),
    Result: SettlementRow,
    execute: ({ seconds, seq }) =>
      sql`UPDATE settlements SET lease_until = now() + ${seconds} * interval '1 second', updated_at = now()
        WHERE seq = ${seq} AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
        RETURNING ${columns}`
  })

  const release = (seq: number) => sql`UPDATE settlements SET lease_until = NULL, updated_at = now() WHERE seq = ${seq}`

  const lock = SqlSchema.single({
    Request: Schema.Number,
    Result: SettlementRow,
    execute: (seq) => sql`SELECT ${columns} FROM settlements WHERE seq = ${seq} FOR UPDATE`
  })

  /** Recorded before the facilitator is asked to settle, so a crash after a broadcast still counts as an attempt. */
  const startAttempt = SqlSchema.single({
    Request: Schema.Number,
    Result: Schema.Struct({ settle_attempts: DbInt }),
    execute: (seq) =>
      sql`UPDATE settlements SET settle_attempts = settle_attempts + 1, updated_at = now() WHERE seq = ${seq}
        RETURNING settle_attempts - 1 AS settle_attempts`
  })

  const markSettled = (seq: number, transfer: TransferRef, receiptId: string) =>
    sql`UPDATE settlements SET status = 'settled', chain_id = ${transfer.chainId}, tx_hash = ${transfer.txHash},
        log_index = ${transfer.logIndex}, receipt_id = ${receiptId}, lease_until = NULL, updated_at = now()
      WHERE seq = ${seq}`

  /** Only a pending claim fails; true when this call failed it (its reserved spend is then to be given back). */
  const markFailed = (seq: number, reason: string) =>
    Effect.map(
      sql`UPDATE settlements SET status = 'failed', failure_reason = ${reason}, lease_until = NULL, updated_at = now()
        WHERE seq = ${seq} AND status = 'pending' RETURNING seq`,
      (rows) => rows.length === 1
    )

  /** A failed claim gives back the spend it reserved. */
  const releaseSpend = (payer: string, amount: number) =>
    sql`UPDATE agents SET spent_micro = spent_micro - ${amount}, updated_at = now() WHERE id = ${payer}`

  /**
   * Claims nobody is settling, those tried least recently first. One the chain still has not decided 10 minutes
   * after its authorization expired (its nonce used, the use not found: a nonce spent long before the claim, or
   * an RPC whose logs lag far behind) is tried once an hour, not every round: a wallet could make many such
   * claims for nothing, each a handful of RPC calls a round that claims able to settle would wait behind.
   */
  const stale = SqlSchema.findAll({
    Request: Schema.Number,
    Result: Seq,
    execute: (limit) =>
      sql`SELECT seq FROM settlements WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < now())
          AND (valid_before > extract(epoch FROM now()) - ${UNDECIDED_AFTER_SECONDS}
            OR updated_at < now() - ${UNDECIDED_RETRY_SECONDS} * interval '1 second')
        ORDER BY updated_at, seq LIMIT ${limit}`
  })

  return {
    byNonce: (payerAddress: string, nonce: string) => Effect.orDie(byNonce({ payerAddress, nonce })),
    byPaymentId: (paymentId: string) => Effect.orDie(byPaymentId(paymentId)),
    live: (payer: string, handoffSeq: number) => Effect.orDie(live({ payer, handoffSeq })),
    insert: (claim: NewClaim) => insert(claim),
    lease: (seq: number, seconds: number) => Effect.orDie(lease({ seq, seconds })),
    release: (seq: number) => Effect.orDie(release(seq)),
    lock: (seq: number) => Effect.orDie(lock(seq)),
    startAttempt: (seq: number) => Effect.orDie(Effect.map(startAttempt(seq), (_) => _.settle_attempts)),
    markSettled: (seq: number, transfer: TransferRef, receiptId: string) =>
      Effect.orDie(markSettled(seq, transfer, receiptId)),
    markFailed: (seq: number, reason: string) => Effect.orDie(markFailed(seq, reason)),
    releaseSpend: (payer: string, amount: number) => Effect.orDie(releaseSpend(payer, amount)),
    stale: (limit: number) => Effect.orDie(Effect.map(stale(limit), (rows) => rows.map((_) => _.seq)))
  } as const
})

export class SettlementRepo
  extends Context.Tag("SettlementRepo")<SettlementRepo, Effect.Effect.Success<typeof make>>()
{
  static readonly layer = Layer.effect(SettlementRepo, make)
}
