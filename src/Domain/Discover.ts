import { Schema } from "effect"
import { UsdAmount } from "./Money.ts"
import { Text } from "./Text.ts"

export const SORTS = ["relevance", "recent", "savings", "price", "reconstruct", "popular"] as const
export const Sort = Schema.Literal(...SORTS).annotations({
  description: "relevance (default with q): full-text rank; recent (default without q): newest first; " +
    "savings: savingsUsd descending; price: cheapest first; reconstruct: reconstructUsd descending; " +
    "popular: most purchases first"
})
export type Sort = typeof Sort.Type

export const MAX_LIMIT = 100
export const DEFAULT_LIMIT = 20

const UsdParam = Schema.compose(Schema.NumberFromString, UsdAmount)
const PositiveIntParam = Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(1e9))

/** Query parameters of GET /api/discover and GET /api/handoffs; every one is optional. */
export const DiscoverParams = Schema.Struct({
  q: Schema.optional(Text(200, "Full-text search over title, tags, teaser and contains claims")),
  tag: Schema.optional(Text(40, "Only handoffs with this tag (case-insensitive)")),
  sort: Schema.optional(Sort),
  maxPrice: Schema.optional(UsdParam.annotations({ description: "Highest priceUsd" })),
  minSavings: Schema.optional(UsdParam.annotations({ description: "Lowest savingsUsd" })),
  minReconstruct: Schema.optional(UsdParam.annotations({ description: "Lowest reconstructUsd" })),
  since: Schema.optional(
    Schema.Date.pipe(
      // JavaScript dates reach back to 271821 BC, PostgreSQL timestamps only to 4713 BC.
      Schema.filter((date) => date.getUTCFullYear() >= 1 && date.getUTCFullYear() <= 9999, {
        message: () => "must be an ISO 8601 time between the years 0001 and 9999"
      })
    ).annotations({ description: "Only handoffs filed at or after this ISO 8601 time" })
  ),
  vendor: Schema.optional(Text(200, "provenance.vendor, case-insensitive exact match")),
  page: Schema.optional(PositiveIntParam.annotations({ description: "1-based page, default 1" })),
  limit: Schema.optional(
    PositiveIntParam.annotations({ description: `Page size, default ${DEFAULT_LIMIT}, capped at ${MAX_LIMIT}` })
  ),
  include: Schema.optional(Schema.Literal("demo").annotations({ description: "`demo` also lists demo packets" }))
})
export type DiscoverParams = typeof DiscoverParams.Type

export interface CatalogQuery {
  readonly q: string
  readonly tag: string
  readonly sort: Sort
  readonly maxPrice: number | null
  readonly minSavings: number | null
  readonly minReconstruct: number | null
  readonly since: Date | null
  readonly vendor: string
  readonly page: number
  readonly limit: number
  readonly includeDemo: boolean
}

export const toCatalogQuery = (params: DiscoverParams): CatalogQuery => {
  const q = params.q?.trim() ?? ""
  return {
    q,
    tag: params.tag?.trim().toLowerCase() ?? "",
    sort: params.sort ?? (q === "" ? "recent" : "relevance"),
    maxPrice: params.maxPrice ?? null,
    minSavings: params.minSavings ?? null,
    minReconstruct: params.minReconstruct ?? null,
    since: params.since ?? null,
    vendor: params.vendor?.trim() ?? "",
    page: params.page ?? 1,
    limit: Math.min(params.limit ?? DEFAULT_LIMIT, MAX_LIMIT),
    includeDemo: params.include === "demo"
  }
}
