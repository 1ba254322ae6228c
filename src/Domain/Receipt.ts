import { Schema } from "effect"

export const Receipt = Schema.Struct({
  receiptId: Schema.String,
  handoffId: Schema.String,
  title: Schema.String,
  payer: Schema.String.annotations({
    description: "The buyer's id for the buyer itself; masked (did:desk:<first 4>…<last 4>) in public listings"
  }),
  filerDid: Schema.String,
  priceUsd: Schema.Number,
  filerPayoutUsd: Schema.Number,
  deskFeeUsd: Schema.Number,
  mode: Schema.Literal("desk", "x402"),
  kind: Schema.Literal("sale", "demo", "self").annotations({
    description: "sale counts in totals; demo (sandbox packet) and self (a filer's own handoff) do not"
  }),
  filerPayoutStatus: Schema.Literal("owed", "pending", "sent", "failed", "zero"),
  filerPayoutTxHash: Schema.NullOr(Schema.String),
  filerPayoutTxUrl: Schema.NullOr(Schema.String),
  txHash: Schema.NullOr(Schema.String),
  txUrl: Schema.NullOr(Schema.String),
  network: Schema.String,
  at: Schema.String
}).annotations({ identifier: "Receipt" })
export type Receipt = typeof Receipt.Type

export const UnlockRequest = Schema.Struct({
  payer: Schema.String.annotations({ description: "Your desk id; must equal X-AGENT-ID" })
}).annotations({ identifier: "UnlockRequest", parseOptions: { onExcessProperty: "error", errors: "all" } })

export const UnlockResponse = Schema.Struct({
  ok: Schema.Literal(true),
  alreadyUnlocked: Schema.Boolean,
  receipt: Receipt,
  bodyUrl: Schema.String
}).annotations({ identifier: "UnlockResponse" })

export const BodyResponse = Schema.Struct({
  ok: Schema.Literal(true),
  id: Schema.String,
  title: Schema.String,
  hash: Schema.String,
  body: Schema.String
}).annotations({ identifier: "SealedBody" })

export const FeedbackRequest = Schema.Struct({ useful: Schema.Boolean }).annotations({
  identifier: "FeedbackRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

export const FeedbackResponse = Schema.Struct({
  ok: Schema.Literal(true),
  id: Schema.String,
  useful: Schema.Int,
  notUseful: Schema.Int,
  yourVote: Schema.Boolean
})
