import { Schema } from "effect"
import { DbInt } from "./DbTypes.ts"

// What the ledger holds about money that moved on-chain, as the audit (npm run audit) compares it with the chain.

export const PaidReceipt = Schema.Struct({
  receipt_id: Schema.String,
  price_micro: DbInt,
  payment_chain_id: Schema.NullOr(DbInt),
  payment_tx_hash: Schema.String,
  payment_log_index: Schema.NullOr(DbInt),
  payment_payer_address: Schema.String,
  payment_nonce: Schema.String,
  /** The `payTo` its buyer signed for, as its claim stored it; none for a receipt without a claim. */
  pay_to: Schema.NullOr(Schema.String)
})
export type PaidReceipt = typeof PaidReceipt.Type

export const Claim = Schema.Struct({
  payer_address: Schema.String,
  nonce: Schema.String,
  price_micro: DbInt,
  status: Schema.Literal("pending", "settled", "failed"),
  failure_reason: Schema.NullOr(Schema.String),
  receipt_id: Schema.NullOr(Schema.String),
  from_block: DbInt,
  /** The `payTo` its buyer signed for. */
  pay_to: Schema.NullOr(Schema.String)
})
export type Claim = typeof Claim.Type

export const SentPayout = Schema.Struct({
  receipt_id: Schema.String,
  amount_micro: DbInt,
  to_address: Schema.NullOr(Schema.String),
  status: Schema.Literal("owed", "pending", "signed", "sent", "failed"),
  tx_hash: Schema.NullOr(Schema.String),
  from_block: Schema.NullOr(DbInt)
})
export type SentPayout = typeof SentPayout.Type

/** Every x402 receipt, claim and payout, read from one database snapshot. */
export interface LedgerSnapshot {
  readonly receipts: ReadonlyArray<PaidReceipt>
  readonly claims: ReadonlyArray<Claim>
  readonly payouts: ReadonlyArray<SentPayout>
}
