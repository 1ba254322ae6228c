import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { gapsOf } from "./Demand.ts"
import { EXAMPLE_PACKET } from "./Example.ts"
import { pricingGuide } from "./Pricing.ts"
import { template } from "./Template.ts"

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
