import { Schema } from "effect"
import { DbDate, DbInt } from "../Domain/DbTypes.ts"
import { PayoutStatus, ReceiptKind } from "../Domain/Receipt.ts"

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
  /** The wallet an x402 payment came from; read where a signed receipt names it, absent in listings. */
  payment_payer_address: Schema.optional(Schema.NullOr(Schema.String)),
  payout_status: PayoutStatus,
  payout_address: Schema.NullOr(Schema.String),
  payout_tx_hash: Schema.NullOr(Schema.String),
  created_at: DbDate
})
export type ReceiptRow = typeof ReceiptRow.Type

/** One receipt as the rules made it, with the payout row it comes with (ReceiptRepo.record writes both). */
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
  readonly payoutStatus: PayoutStatus
  readonly countsAsPurchase: boolean
  /** The on-chain payment behind an x402 receipt: the one Transfer log that paid for it, and its authorization. */
  readonly payment: {
    readonly chainId: number
    readonly txHash: string
    readonly logIndex: number
    readonly payerAddress: string
    readonly nonce: string
    /** Where a search for its payout may start: no payout can be mined before the payment's claim. */
    readonly fromBlock: bigint
  } | null
  /** The filer's payout address as read for the rules; null: as registered now. */
  readonly payoutAddress: string | null
  readonly payout: "owed" | "pending" | null
}
