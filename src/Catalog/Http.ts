import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { DeskConfig } from "../Config.ts"
import { type DiscoverParams, toCatalogQuery } from "../Domain/Discover.ts"
import { toUsd, usdText } from "../Domain/Money.ts"
import { Preview } from "../Domain/Preview.ts"
import { encodedAsIs } from "../Http/Respond.ts"
import { CurrentAgent } from "../Identity/AgentAuth.ts"
import { CatalogResponse, DiscoverResponse } from "./Responses.ts"
import { RECONSTRUCT_NOTE } from "./toPreview.ts"

const VENDOR_NOTE = "vendor matches provenance.vendor case-insensitively; listings without provenance never match."

const NEXT_ACTIONS = {
  preview: "GET /api/handoffs/:id (free preview, no body)",
  buy: "POST /api/handoffs/:id/unlock with X-AGENT-ID and {\"payer\": <your id>} (confirm with your owner first)",
  fetch: "GET /api/handoffs/:id/body with X-AGENT-ID after unlocking",
  file: "POST /api/handoffs with X-AGENT-ID (free; see GET /api/template)"
}

const usdOrNull = (micros: number | null) => (micros === null ? null : toUsd(micros))

/** The parameters decoded to whole micro-USDC, written back in USD. */
const IN_USD: ReadonlySet<string> = new Set(["maxPrice", "minSavings", "minReconstruct"])

/** Path of the following page, keeping every filter so that following it continues the same search. */
const nextPath = (params: DiscoverParams, page: number, limit: number) => {
  const search = new URLSearchParams({ limit: String(limit), page: String(page + 1) })
  for (const [key, value] of Object.entries(params)) {
    if (key === "page" || key === "limit" || value === undefined) continue
    search.set(
      key,
      value instanceof Date
        ? value.toISOString()
        : IN_USD.has(key) && typeof value === "number"
        ? usdText(value)
        : String(value)
    )
  }
  return `/api/discover?${search.toString()}`
}

export const CatalogHttp = HttpApiBuilder.group(DeskApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const config = yield* DeskConfig
    return handlers
      .handle("file", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => catalog.file(agent, payload)))
      .handle("preview", ({ path }) => Effect.map(catalog.get(path.id), (preview) => encodedAsIs(Preview, preview)))
      .handle("discover", ({ urlParams }) =>
        Effect.gen(function*() {
          const query = toCatalogQuery(urlParams)
          const { items, pages, ...listing } = yield* catalog.discover(query)
          return encodedAsIs(DiscoverResponse, {
            name: "Handoff Desk",
            site: config.publicUrl,
            identityHeader: "X-AGENT-ID",
            ...listing,
            pages,
            query: {
              q: query.q,
              tag: query.tag,
              sort: urlParams.sort ?? "",
              maxPrice: usdOrNull(query.maxPrice),
              minSavings: usdOrNull(query.minSavings),
              minReconstruct: usdOrNull(query.minReconstruct),
              since: query.since?.toISOString() ?? null,
              vendor: query.vendor,
              vendorNote: query.vendor === "" ? "" : VENDOR_NOTE,
              page: query.page,
              limit: query.limit
            },
            reconstructNote: RECONSTRUCT_NOTE,
            // `pages` stops at the result window, so `next` never names a page the desk would refuse.
            next: query.page < pages ? nextPath(urlParams, query.page, query.limit) : null,
            nextActions: NEXT_ACTIONS,
            items
          })
        }))
      .handle("catalog", ({ urlParams }) =>
        Effect.gen(function*() {
          const query = toCatalogQuery(urlParams)
          const [listing, tags] = yield* Effect.all([catalog.discover(query), catalog.tagsInUse(query.includeDemo)])
          return encodedAsIs(CatalogResponse, { ...listing, tags: tags.tags, tagCount: tags.total, sort: query.sort })
        }))
  }))
