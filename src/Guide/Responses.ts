import { Schema } from "effect"

const ExampleProvenance = Schema.Struct({
  vendor: Schema.String,
  model: Schema.String,
  agentName: Schema.String,
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  durationMinutes: Schema.Number,
  tools: Schema.Array(Schema.String)
})

export const ExamplePacket = Schema.Struct({
  id: Schema.Literal("EXAMPLE"),
  priceUsd: Schema.Literal(0),
  reconstructUsd: Schema.Number,
  title: Schema.String,
  teaser: Schema.String,
  free: Schema.Literal(true),
  tags: Schema.Array(Schema.String),
  contains: Schema.Array(Schema.String),
  doesNotContain: Schema.Array(Schema.String),
  whyPay: Schema.String,
  provenance: ExampleProvenance,
  body: Schema.String
}).annotations({ identifier: "ExamplePacket" })

export const PricingGuide = Schema.Struct({
  rule: Schema.String,
  hardMinUsd: Schema.Number,
  suggestedFloorUsd: Schema.Number,
  floorUsd: Schema.Number,
  maxUsd: Schema.Null,
  example: Schema.String,
  filerSharePct: Schema.Number,
  deskFeePct: Schema.Number,
  note: Schema.String
}).annotations({ identifier: "PricingGuide" })

export const Gap = Schema.Struct({
  tag: Schema.String,
  why: Schema.String,
  packets: Schema.Int,
  unlocks: Schema.Int,
  avgReconstructUsd: Schema.Number,
  gap: Schema.Literal("unproven", "thin", "supplied"),
  suggestPriceUsd: Schema.Number
})

export const DemandResponse = Schema.Struct({
  ok: Schema.Literal(true),
  note: Schema.String,
  pricing: PricingGuide,
  gaps: Schema.Array(Gap),
  next: Schema.Array(Schema.String)
}).annotations({ identifier: "DemandResponse" })

export const TemplateResponse = Schema.Struct({
  ok: Schema.Literal(true),
  filingSchema: Schema.Unknown.annotations({ description: "JSON Schema (2020-12) of the filing request" }),
  limits: Schema.Unknown.annotations({ description: "Maximum lengths in Unicode code points and items" }),
  pricing: PricingGuide,
  standingOrder: Schema.Array(Schema.String),
  example: Schema.Unknown.annotations({ description: "A filled filing request you can adapt" }),
  replace: Schema.String.annotations({ description: "The example's values are placeholders: what to replace" }),
  headers: Schema.Record({ key: Schema.String, value: Schema.String })
}).annotations({ identifier: "TemplateResponse" })
