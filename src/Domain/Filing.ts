import { Schema } from "effect"
import { EvmAddress, evmAddressJsonSchema } from "./Agent.ts"
import { filingRuleIssues } from "./FilingRules.ts"
import { DeskId } from "./Ids.ts"
import { rule, STABLE_FILTER } from "./Issues.ts"
import { MICROS_PER_USD, usdAmount } from "./Money.ts"
import { cleanLabel, codePoints, StorableString, Text, TextList, visibleLength } from "./Text.ts"

export { PLACEHOLDERS, REQUIRED_SECTIONS } from "./FilingRules.ts"

/** Documented maximum lengths, in Unicode code points and array items. */
export const LIMITS = {
  title: 200,
  teaser: 1_000,
  bodyMin: 400,
  /** Of the body's characters, how many at least a reader sees: a body of padding says nothing. */
  bodyVisibleMin: 200,
  body: 200_000,
  filer: 80,
  whyPay: 1_000,
  tags: { items: 20, chars: 40 },
  contains: { items: 30, chars: 120 },
  doesNotContain: { items: 30, chars: 200 },
  provenanceText: 200,
  tools: { items: 50, chars: 100 }
} as const

const MAX_MEASURE = 1e12

const BODY_DESCRIPTION = `Sealed Markdown body: at least ${LIMITS.bodyMin} characters (Unicode code points), of ` +
  `which at least ${LIMITS.bodyVisibleMin} visible (whitespace runs count once, invisible characters and ` +
  "combining marks not at all), " +
  "with Markdown headings titled `Failed approaches` and `Recommended next actions`"

const Count = Schema.Number.annotations({ message: rule("must be a whole number") }).pipe(
  Schema.filter((n) => Number.isSafeInteger(n) && n >= 0, {
    message: rule("must be a whole number of at least 0"),
    jsonSchema: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
  })
)
const Measure = Schema.Number.annotations({ message: rule("must be a number") }).pipe(
  Schema.filter((n) => Number.isFinite(n) && n >= 0 && n <= MAX_MEASURE, {
    message: rule(`must be a number from 0 to ${MAX_MEASURE}`),
    jsonSchema: { minimum: 0, maximum: MAX_MEASURE }
  })
)

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

const FilingFields = Schema.Struct({
  title: Text(LIMITS.title, "Specific, searchable title"),
  teaser: Text(LIMITS.teaser, "Public summary; no secrets"),
  body: StorableString.pipe(
    // The spec's minimum counts characters as JSON Schema's minLength does (code points), so a body the published
    // schema takes is taken; a body mostly of whitespace or invisible characters is refused beside it.
    Schema.filter((s) => codePoints(s) >= LIMITS.bodyMin, {
      message: (issue) =>
        `must be at least ${LIMITS.bodyMin} characters; got ${
          typeof issue.actual === "string" ? codePoints(issue.actual) : 0
        }`
    }),
    Schema.filter((s) => visibleLength(s) >= LIMITS.bodyVisibleMin, {
      message: (issue) =>
        `must hold at least ${LIMITS.bodyVisibleMin} visible characters (whitespace runs count once, invisible ` +
        `characters and combining marks not at all): a body of padding says nothing; got ${
          typeof issue.actual === "string" ? visibleLength(issue.actual) : 0
        }`
    }),
    Schema.filter((s) => codePoints(s) <= LIMITS.body, {
      message: (issue) =>
        `must be at most ${LIMITS.body} characters; got ${
          typeof issue.actual === "string" ? codePoints(issue.actual) : 0
        }`
    })
  ).annotations({
    jsonSchema: {
      type: "string",
      minLength: LIMITS.bodyMin,
      maxLength: LIMITS.body,
      description: BODY_DESCRIPTION
    }
  }),
  filer: Text(LIMITS.filer, "Public filing handle"),
  filerDid: DeskId,
  priceUsd: usdAmount(1 / MICROS_PER_USD).annotations({
    description: "Unlock price in USD: at least 0.000001 (one micro-USDC), at most 6 decimals; no business maximum " +
      "(1,000,000,000 keeps every amount exact)"
  }),
  // Above priceUsd, so at least two micro-USDC.
  reconstructUsd: usdAmount(2 / MICROS_PER_USD).annotations({
    description: "Your estimate of the cost to redo the work, in USD with at most 6 decimals; must exceed priceUsd"
  }),
  minutes: Schema.optional(Schema.NullOr(Measure)),
  tags: Schema.optional(
    TextList(LIMITS.tags.items, LIMITS.tags.chars, "Search tags; stored trimmed and lowercase").pipe(
      // Lowercasing can lengthen a tag (U+0130 becomes two code points): the stored form is held to the limit,
      // or the listing would name a tag that discover refuses to search for.
      Schema.filter((tags) => tags.every((tag) => codePoints(cleanLabel(tag)) <= LIMITS.tags.chars), {
        message: () => `each tag must be at most ${LIMITS.tags.chars} characters once lowercased, as it is stored`
      })
    )
  ),
  contains: Schema.optional(TextList(LIMITS.contains.items, LIMITS.contains.chars, "Section names the body holds")),
  doesNotContain: Schema.optional(
    TextList(LIMITS.doesNotContain.items, LIMITS.doesNotContain.chars, "Phrases the body never contains (checked)")
  ),
  whyPay: Schema.optional(Text(LIMITS.whyPay)),
  provenance: Schema.optional(Schema.NullOr(ProvenanceInput)),
  payoutAddress: Schema.optional(EvmAddress.annotations({
    jsonSchema: evmAddressJsonSchema(
      "Optional (beyond the spec): registers your payout address with your first filing, so no one else can " +
        "register one for your id first. Ignored when it equals the registered one; a different one is refused."
    )
  }))
})

/** A filing: its fields, then the rules across them, judged in the same decode (see STABLE_FILTER). */
export const FilingRequest = FilingFields.pipe(
  Schema.filter(
    (filing) =>
      filingRuleIssues(filing).map(({ message, path }) => ({
        path: path.split(".").map((key) => (/^\d+$/.test(key) ? Number(key) : key)),
        message
      })),
    { [STABLE_FILTER]: true }
  )
).annotations({
  identifier: "FilingRequest",
  description: "Title, teaser and sealed Markdown body (with `Failed approaches` and `Recommended next actions` " +
    "headings), your handle and id, the price and your estimate to redo the work",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})
export type FilingRequest = typeof FilingRequest.Type
