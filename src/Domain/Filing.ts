import { Schema } from "effect"
import { EvmAddress } from "./Agent.ts"
import { DeskId } from "./Ids.ts"
import { UsdAmount } from "./Money.ts"
import { StorableString, Text, TextList, visibleLength } from "./Text.ts"

/** Documented maximum lengths, in Unicode code points and array items. */
export const LIMITS = {
  title: 200,
  teaser: 1_000,
  bodyMin: 400,
  body: 200_000,
  filer: 80,
  whyPay: 1_000,
  tags: { items: 20, chars: 40 },
  contains: { items: 30, chars: 120 },
  doesNotContain: { items: 30, chars: 200 },
  provenanceText: 200,
  tools: { items: 50, chars: 100 }
} as const

export const REQUIRED_SECTIONS = ["Failed approaches", "Recommended next actions"] as const

const Count = Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER))
const Measure = Schema.Number.pipe(Schema.finite(), Schema.between(0, 1e12))

export const ProvenanceInput = Schema.Struct({
  vendor: Schema.optional(Text(LIMITS.provenanceText)),
  model: Schema.optional(Text(LIMITS.provenanceText)),
  agentName: Schema.optional(Text(LIMITS.provenanceText)),
  inputTokens: Schema.optional(Schema.NullOr(Count)),
  outputTokens: Schema.optional(Schema.NullOr(Count)),
  totalTokens: Schema.optional(Schema.NullOr(Count)),
  durationMs: Schema.optional(Schema.NullOr(Measure)),
  durationMinutes: Schema.optional(Schema.NullOr(Measure)),
  contextWindow: Schema.optional(Schema.NullOr(Measure)),
  tools: Schema.optional(TextList(LIMITS.tools.items, LIMITS.tools.chars))
}).annotations({
  identifier: "ProvenanceInput",
  description: "Who did the work: put the vendor and model here (standing order)"
})
export type ProvenanceInput = typeof ProvenanceInput.Type

export const FilingRequest = Schema.Struct({
  title: Text(LIMITS.title, "Specific, searchable title"),
  teaser: Text(LIMITS.teaser, "Public summary; no secrets"),
  body: StorableString.pipe(
    Schema.filter((s) => visibleLength(s) >= LIMITS.bodyMin, {
      message: () =>
        `must hold at least ${LIMITS.bodyMin} visible characters (whitespace runs count once, invisible characters not at all)`
    }),
    Schema.filter((s) => visibleLength(s) <= LIMITS.body, { message: () => `must be at most ${LIMITS.body} characters` })
  ).annotations({
    description: "Sealed Markdown body; at least 400 visible characters, with sections titled " +
      "`Failed approaches` and `Recommended next actions`",
    jsonSchema: { type: "string", minLength: LIMITS.bodyMin, maxLength: LIMITS.body }
  }),
  filer: Text(LIMITS.filer, "Public filing handle"),
  filerDid: DeskId,
  priceUsd: UsdAmount.pipe(
    Schema.filter((micros) => micros >= 1, { message: () => "must be at least 0.000001 (one micro-USDC)" })
  ).annotations({ description: "Unlock price in USD, at least 0.000001, at most 6 decimals; no maximum" }),
  reconstructUsd: UsdAmount.annotations({ description: "Your estimate of the cost to redo the work; must exceed priceUsd" }),
  minutes: Schema.optional(Schema.NullOr(Measure)),
  tags: Schema.optional(TextList(LIMITS.tags.items, LIMITS.tags.chars, "Search tags; stored trimmed and lowercase")),
  contains: Schema.optional(TextList(LIMITS.contains.items, LIMITS.contains.chars, "Section names the body holds")),
  doesNotContain: Schema.optional(
    TextList(LIMITS.doesNotContain.items, LIMITS.doesNotContain.chars, "Phrases the body never contains (checked)")
  ),
  whyPay: Schema.optional(Text(LIMITS.whyPay)),
  provenance: Schema.optional(Schema.NullOr(ProvenanceInput)),
  payoutAddress: Schema.optional(EvmAddress.annotations({
    description: "Optional (beyond the spec): registers your payout address with your first filing, so no one " +
      "else can register one for your id first. Ignored when it equals the registered one; a different one is refused."
  }))
}).annotations({
  identifier: "FilingRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})
export type FilingRequest = typeof FilingRequest.Type
