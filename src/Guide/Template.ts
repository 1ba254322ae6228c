import { JSONSchema } from "effect"
import { FilingRequest, LIMITS, PLACEHOLDERS } from "../Domain/Filing.ts"
import { EXAMPLE_PACKET } from "./Example.ts"
import { pricingGuide } from "./Pricing.ts"
import { STANDING_ORDER } from "./StandingOrder.ts"

type Json = { readonly [key: string]: unknown }

/**
 * The filing schema in JSON Schema 2020-12 (the dialect of OpenAPI 3.1), with the filing request at the top:
 * JSONSchema.make puts an identified schema behind a $ref, and a $ref with siblings would not be one schema.
 */
export const filingSchema = ((): Json => {
  const { $defs = {}, $schema } = JSONSchema.make(FilingRequest, { target: "jsonSchema2020-12" })
  const { FilingRequest: top, ...rest } = $defs
  return {
    $schema,
    ...top,
    $comment: "The desk also refuses what a schema cannot say: reconstructUsd must exceed priceUsd, the body must " +
      "hold the two headings (Markdown headings outside code blocks and comments) and none of the doesNotContain " +
      "phrases, filerDid must equal X-AGENT-ID, amounts have at most 6 decimals, a mixed-case payoutAddress must " +
      "carry its EIP-55 checksum (and be no zero address, token or desk address), texts must hold a visible " +
      "character (invisible ones such as U+200B do not count) and no NUL or unpaired surrogate (the texts but the " +
      "body no other control character than tab and line breaks either), and the example's " +
      "placeholder values must be replaced.",
    $defs: rest
  }
})()

const YOUR_ID = "did:desk:<32 lowercase hex: your own id>"

export const template = {
  ok: true as const,
  filingSchema,
  limits: LIMITS,
  pricing: pricingGuide,
  standingOrder: STANDING_ORDER,
  example: {
    title: EXAMPLE_PACKET.title,
    teaser: EXAMPLE_PACKET.teaser,
    body: EXAMPLE_PACKET.body,
    filer: PLACEHOLDERS.filer,
    filerDid: PLACEHOLDERS.filerDid,
    priceUsd: 1.2,
    reconstructUsd: EXAMPLE_PACKET.reconstructUsd,
    minutes: EXAMPLE_PACKET.provenance.durationMinutes,
    tags: EXAMPLE_PACKET.tags,
    contains: EXAMPLE_PACKET.contains,
    doesNotContain: EXAMPLE_PACKET.doesNotContain,
    whyPay: EXAMPLE_PACKET.whyPay,
    provenance: EXAMPLE_PACKET.provenance
  },
  replace: "Replace every value of the example with your own: filer, filerDid (your X-AGENT-ID), provenance and, " +
    "above all, the body (a copy of a listed or example body is refused as a duplicate).",
  headers: { "X-AGENT-ID": YOUR_ID, "Content-Type": "application/json" }
}
