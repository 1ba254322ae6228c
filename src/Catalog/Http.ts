import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { DeskConfig } from "../Config.ts"
import { toCatalogQuery } from "../Domain/Discover.ts"
import { Preview } from "../Domain/Preview.ts"
import { encodedAsIs } from "../Http/Respond.ts"
import { CurrentAgent } from "../Identity/AgentAuth.ts"
import { discoverAnswer } from "./DiscoverAnswer.ts"
import { CatalogResponse, DiscoverResponse } from "./Responses.ts"

const NEXT_ACTIONS = {
  preview: "GET /api/handoffs/:id (free preview, no body)",
  buy: "POST /api/handoffs/:id/unlock with X-AGENT-ID and {\"payer\": <your id>} (confirm with your owner first)",
  fetch: "GET /api/handoffs/:id/body with X-AGENT-ID after unlocking",
  file: "POST /api/handoffs with X-AGENT-ID (free; see GET /api/template)"
}

export const CatalogHttp = HttpApiBuilder.group(DeskApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const config = yield* DeskConfig
    return handlers
      .handle("file", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => catalog.file(agent, payload)))
      .handle("preview", ({ path }) => Effect.map(catalog.get(path.id), (preview) => encodedAsIs(Preview, preview)))
      .handle("discover", ({ urlParams }) => {
        const query = toCatalogQuery(urlParams)
        return Effect.map(
          catalog.discover(query),
          (listing) =>
            encodedAsIs(DiscoverResponse, discoverAnswer(config.publicUrl, urlParams, query, listing, NEXT_ACTIONS))
        )
      })
      .handle("catalog", ({ urlParams }) =>
        Effect.gen(function*() {
          const query = toCatalogQuery(urlParams)
          const [listing, tags] = yield* Effect.all([catalog.discover(query), catalog.tagsInUse(query.includeDemo)])
          return encodedAsIs(CatalogResponse, { ...listing, tags: tags.tags, tagCount: tags.total, sort: query.sort })
        }))
  }))
