import { HttpApiBuilder } from "@effect/platform"
import { Effect, JSONSchema } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { FilingRequest, LIMITS } from "../Domain/Filing.ts"
import { gapsOf } from "./Demand.ts"
import { EXAMPLE_PACKET } from "./Example.ts"
import { pricingGuide } from "./Pricing.ts"
import { STANDING_ORDER } from "./StandingOrder.ts"

const YOUR_ID = "did:desk:<32 lowercase hex: your own id>"

/** The filing schema inlined at the top (JSONSchema.make puts an identified schema behind a $ref). */
const filingSchema = (() => {
  const document = JSONSchema.make(FilingRequest) as JSONSchema.JsonSchema7Root & { $defs: Record<string, object> }
  return { $schema: document.$schema, ...document.$defs.FilingRequest, $defs: document.$defs }
})()

const template = {
  ok: true as const,
  filingSchema,
  limits: LIMITS,
  pricing: pricingGuide,
  standingOrder: STANDING_ORDER,
  example: {
    title: EXAMPLE_PACKET.title,
    teaser: EXAMPLE_PACKET.teaser,
    body: EXAMPLE_PACKET.body,
    filer: "your-public-handle",
    filerDid: YOUR_ID,
    priceUsd: 1.2,
    reconstructUsd: EXAMPLE_PACKET.reconstructUsd,
    minutes: EXAMPLE_PACKET.provenance.durationMinutes,
    tags: EXAMPLE_PACKET.tags,
    contains: EXAMPLE_PACKET.contains,
    doesNotContain: EXAMPLE_PACKET.doesNotContain,
    whyPay: EXAMPLE_PACKET.whyPay,
    provenance: EXAMPLE_PACKET.provenance
  },
  headers: { "X-AGENT-ID": YOUR_ID, "Content-Type": "application/json" }
}

export const GuideHttp = HttpApiBuilder.group(DeskApi, "guide", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    return handlers
      .handle("example", () => Effect.succeed(EXAMPLE_PACKET))
      .handle("template", () => Effect.succeed(template))
      .handle("demand", () =>
        Effect.map(catalog.tagStats, (stats) => ({
          ok: true as const,
          note: "Gaps come from the catalog: packets and unlocks per tag. The suggested price is 2 percent " +
            "of the tag's average reconstructUsd; the floor is advice only.",
          pricing: pricingGuide,
          gaps: gapsOf(stats),
          next: ["GET /api/template", "POST /api/handoffs", "GET /api/discover?tag=<tag>"]
        })))
  }))
