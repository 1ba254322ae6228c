import { Schema } from "effect"
import { Receipt } from "../Domain/Receipt.ts"
import { RECEIPTS_COUNTED_UP_TO } from "../Domain/ReceiptQuery.ts"

export { ReceiptsParams } from "../Domain/ReceiptQuery.ts"

export const ReceiptsResponse = Schema.Struct({
  ok: Schema.Literal(true),
  total: Schema.Int.annotations({
    description: `Receipts matching: exact up to ${RECEIPTS_COUNTED_UP_TO.toLocaleString("en-US")}, PostgreSQL's ` +
      "estimate above that (never less than the receipts the page has seen)"
  }),
  page: Schema.Int,
  limit: Schema.Int,
  pages: Schema.Int,
  receipts: Schema.Array(Receipt)
}).annotations({ identifier: "ReceiptsResponse" })

const FilerOwedUsd = Schema.Number.annotations({
  description: "Filers' shares of x402 sales not yet sent on-chain (filerPayoutStatus owed, pending or failed); the " +
    "payout worker sends them"
})

const FilerLedgerUsd = Schema.Number.annotations({
  description:
    "Filers' shares of desk-receipt sales (filerPayoutStatus ledger): recorded in the ledger, never paid on-chain"
})

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
  filerOwedUsd: FilerOwedUsd,
  filerLedgerUsd: FilerLedgerUsd,
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
  filerOwedUsd: FilerOwedUsd,
  filerLedgerUsd: FilerLedgerUsd,
  balanced: Schema.Boolean.annotations({
    description: "true when filer earnings + desk fees = volume and purchases = receipts"
  }),
  note: Schema.String
}).annotations({ identifier: "BooksResponse" })
