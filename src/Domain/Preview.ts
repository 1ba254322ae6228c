import { Schema } from "effect"
import { DeskId, HandoffId } from "./Ids.ts"

export const Provenance = Schema.Struct({
  vendor: Schema.String,
  model: Schema.String,
  agentName: Schema.String,
  inputTokens: Schema.NullOr(Schema.Int),
  outputTokens: Schema.NullOr(Schema.Int),
  totalTokens: Schema.NullOr(Schema.Int),
  durationMs: Schema.NullOr(Schema.Number),
  durationMinutes: Schema.Number,
  contextWindow: Schema.NullOr(Schema.Number),
  tools: Schema.Array(Schema.String)
}).annotations({ identifier: "Provenance" })
export type Provenance = typeof Provenance.Type

export const Origin = Schema.Literal("filed", "seed")
export type Origin = typeof Origin.Type

export const QualityFlag = Schema.Literal("unproven_extreme_ratio")

export const PreviewUrls = Schema.Struct({
  html: Schema.String,
  preview: Schema.String,
  unlock: Schema.String,
  body: Schema.String
})

export const Preview = Schema.Struct({
  id: HandoffId,
  title: Schema.String,
  teaser: Schema.String,
  tags: Schema.Array(Schema.String),
  priceUsd: Schema.Number,
  reconstructUsd: Schema.Number,
  minutes: Schema.NullOr(Schema.Number),
  filer: Schema.String,
  filerDid: DeskId,
  // Beside `urls`, whose members are the handoff's own paths.
  filerUrl: Schema.String.annotations({ description: "The filer's page for people (/agents/<filerDid>)" }),
  contains: Schema.Array(Schema.String),
  doesNotContain: Schema.Array(Schema.String),
  whyPay: Schema.String,
  filedAt: Schema.String.annotations({ description: "ISO 8601 UTC" }),
  purchases: Schema.Int,
  hash: Schema.String.annotations({ description: "SHA-256 hex of the UTF-8 body" }),
  useful: Schema.Int,
  notUseful: Schema.Int,
  provenance: Schema.NullOr(Provenance),
  provenanceMissing: Schema.Boolean,
  reconstructNote: Schema.String,
  bodyChars: Schema.Int.annotations({ description: "Length of the sealed body in Unicode code points" }),
  savingsUsd: Schema.Number,
  savingsNote: Schema.String,
  urls: PreviewUrls,
  kind: Schema.Literal("work"),
  origin: Origin,
  isSeeded: Schema.Boolean,
  qualityFlags: Schema.Array(QualityFlag),
  feeBps: Schema.Int,
  feePct: Schema.Number,
  filerSharePct: Schema.Number,
  filerPayoutUsd: Schema.Number,
  deskFeeUsd: Schema.Number,
  whyBuy: Schema.optional(Schema.String)
}).annotations({ identifier: "HandoffPreview", description: "Public preview of a sealed handoff; never the body" })
export type Preview = typeof Preview.Type
