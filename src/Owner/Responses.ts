import { Schema } from "effect"
import { DeskId, HandoffId } from "../Domain/Ids.ts"

export const OwnedFiling = Schema.Struct({
  id: HandoffId,
  title: Schema.String,
  priceUsd: Schema.Number,
  filedAt: Schema.String,
  sales: Schema.Int,
  earnedUsd: Schema.Number.annotations({ description: "The filer's 90 % of this handoff's sales" })
})

export const OwnedPurchase = Schema.Struct({
  receiptId: Schema.String,
  handoffId: HandoffId,
  title: Schema.String,
  filer: Schema.String,
  filerDid: Schema.String,
  priceUsd: Schema.Number,
  kind: Schema.String.annotations({ description: "sale counts against the spend cap; demo and self do not" }),
  mode: Schema.String.annotations({ description: "desk: a ledger receipt; x402: paid in USDC on-chain" }),
  at: Schema.String
})

export const ActivityDay = Schema.Struct({
  day: Schema.String.annotations({ description: "UTC day, YYYY-MM-DD" }),
  spentUsd: Schema.Number,
  earnedUsd: Schema.Number
})

export const OwnerView = Schema.Struct({
  ok: Schema.Literal(true),
  id: DeskId,
  since: Schema.String,
  payoutAddress: Schema.NullOr(Schema.String),
  spend: Schema.Struct({
    capUsd: Schema.Number,
    spentUsd: Schema.Number,
    leftUsd: Schema.Number,
    purchases: Schema.Int.annotations({ description: "Purchases that count against the cap (kind sale)" })
  }),
  earnings: Schema.Struct({
    sales: Schema.Int,
    totalUsd: Schema.Number.annotations({ description: "The filer's 90 % of every sale" }),
    onChainUsd: Schema.Number.annotations({ description: "Paid out in USDC to the payout address" }),
    owedUsd: Schema.Number.annotations({ description: "Due on-chain and not sent yet (pending, failed or owed)" }),
    ledgerUsd: Schema.Number.annotations({ description: "Recorded on the desk's ledger only: no USDC moves" })
  }),
  filings: Schema.Struct({ total: Schema.Int, items: Schema.Array(OwnedFiling) }),
  purchases: Schema.Struct({ total: Schema.Int, items: Schema.Array(OwnedPurchase) }),
  activity: Schema.Array(ActivityDay).annotations({
    description: "Per UTC day with a sale bought or sold (at most the last 366): spend and earnings"
  }),
  note: Schema.String
}).annotations({ identifier: "OwnerView" })
export type OwnerView = typeof OwnerView.Type
