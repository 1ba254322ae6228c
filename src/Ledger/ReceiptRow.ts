import { Schema } from "effect"
import { DbDate, DbInt } from "../Domain/DbTypes.ts"

export const ReceiptKind = Schema.Literal("sale", "demo", "self")
export type ReceiptKind = typeof ReceiptKind.Type

export const PayoutStatus = Schema.Literal("owed", "pending", "sent", "failed", "zero")
export type PayoutStatus = typeof PayoutStatus.Type

export const ReceiptRow = Schema.Struct({
  receipt_id: Schema.String,
  handoff_seq: DbInt,
  title: Schema.String,
  payer: Schema.String,
  filer_did: Schema.String,
  price_micro: DbInt,
  filer_micro: DbInt,
  desk_micro: DbInt,
  kind: ReceiptKind,
  mode: Schema.Literal("desk", "x402"),
  network: Schema.String,
  payment_tx_hash: Schema.NullOr(Schema.String),
  payout_status: PayoutStatus,
  payout_address: Schema.NullOr(Schema.String),
  payout_tx_hash: Schema.NullOr(Schema.String),
  created_at: DbDate
})
export type ReceiptRow = typeof ReceiptRow.Type

export interface NewReceipt {
  readonly receiptId: string
  readonly handoffSeq: number
  readonly payer: string
  readonly filerDid: string
  readonly priceMicro: number
  readonly filerMicro: number
  readonly deskMicro: number
  readonly kind: ReceiptKind
  readonly mode: "desk" | "x402"
  readonly network: string
  readonly paymentTxHash: string | null
  readonly paymentPayerAddress: string | null
  readonly paymentNonce: string | null
  readonly payoutStatus: PayoutStatus
  readonly payoutAddress: string | null
}
