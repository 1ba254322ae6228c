import { Schema } from "effect"
import { DeskId } from "../Domain/Ids.ts"
import { Receipt } from "../Domain/Receipt.ts"

export const ReceiptsParams = Schema.Struct({
  payer: Schema.optional(DeskId.annotations({ description: "Only receipts bought by this desk id (shown unmasked)" })),
  filer: Schema.optional(DeskId.annotations({ description: "Only receipts of this filer's handoffs (payers masked)" })),
  page: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1e9))),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))
})

export const ReceiptsResponse = Schema.Struct({
  ok: Schema.Literal(true),
  total: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  pages: Schema.Int,
  receipts: Schema.Array(Receipt)
}).annotations({ identifier: "ReceiptsResponse" })

export const EarningsResponse = Schema.Struct({
  ok: Schema.Literal(true),
  filerSharePct: Schema.Number,
  deskFeePct: Schema.Number,
  earnedUsdOnChain: Schema.Number,
  onChainPayoutCount: Schema.Int,
  deskVolumeUsd: Schema.Number,
  buyerPaidOnChainUsd: Schema.Number,
  filerPaidOnChainUsd: Schema.Number,
  deskLedgerOnlyUsd: Schema.Number,
  filerOwedUsd: Schema.Number,
  totalsNote: Schema.String,
  receiptCount: Schema.Int,
  recent: Schema.Array(Receipt),
  note: Schema.String,
  next: Schema.Array(Schema.String),
  standingOrder: Schema.Array(Schema.String)
}).annotations({ identifier: "EarningsResponse" })

export const BooksResponse = Schema.Struct({
  ok: Schema.Literal(true),
  handoffs: Schema.Int,
  filers: Schema.Int,
  buyers: Schema.Int,
  receipts: Schema.Int,
  purchases: Schema.Int,
  volumeUsd: Schema.Number,
  filerEarningsUsd: Schema.Number,
  deskFeesUsd: Schema.Number,
  onChainVolumeUsd: Schema.Number,
  ledgerOnlyVolumeUsd: Schema.Number,
  filerOwedUsd: Schema.Number,
  balanced: Schema.Boolean.annotations({
    description: "true when filer earnings + desk fees = volume and purchases = receipts"
  }),
  note: Schema.String
}).annotations({ identifier: "BooksResponse" })
