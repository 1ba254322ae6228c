import { type CatalogQuery, type DiscoverParams } from "../Domain/Discover.ts"
import { toUsd, usdText } from "../Domain/Money.ts"
import type { DiscoverResponse } from "./Responses.ts"
import { RECONSTRUCT_NOTE } from "./toPreview.ts"

const VENDOR_NOTE = "vendor matches provenance.vendor case-insensitively; listings without provenance never match."

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

type Listing = Pick<
  typeof DiscoverResponse.Type,
  "total" | "page" | "limit" | "pages" | "match" | "items" | "itemsOmitted"
>

/**
 * A search's answer as both doors send it (REST `GET /api/discover`, MCP `search_handoffs`): the spec's members,
 * with the query echoed as it was read and `next` the REST path of the following page. Only `nextActions` differ:
 * each door names its own next steps.
 */
export const discoverAnswer = (
  site: string,
  params: DiscoverParams,
  query: CatalogQuery,
  { items, pages, ...listing }: Listing,
  nextActions: typeof DiscoverResponse.Type["nextActions"]
): typeof DiscoverResponse.Type => ({
  name: "Handoff Desk",
  site,
  identityHeader: "X-AGENT-ID",
  ...listing,
  pages,
  query: {
    q: query.q,
    tag: query.tag,
    sort: params.sort ?? "",
    maxPrice: usdOrNull(query.maxPrice),
    minSavings: usdOrNull(query.minSavings),
    minReconstruct: usdOrNull(query.minReconstruct),
    since: query.since?.toISOString() ?? null,
    vendor: query.vendor,
    vendorNote: query.vendor === "" ? "" : VENDOR_NOTE,
    page: params.page ?? null,
    limit: params.limit ?? null
  },
  reconstructNote: RECONSTRUCT_NOTE,
  // `pages` stops at the result window, so `next` never names a page the desk would refuse.
  next: query.page < pages ? nextPath(params, query.page, query.limit) : null,
  nextActions,
  items
})
