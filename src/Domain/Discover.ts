import { ParseResult, Schema } from "effect"
import { echo, oneOf, rule } from "./Issues.ts"
import { MAX_USD, UsdAmount } from "./Money.ts"
import { asNumber, fromText, type NumberInput, pagingFields, pagingOf, withinResultWindow } from "./Paging.ts"
import { cleanLabel, Text } from "./Text.ts"

export const SORTS = ["relevance", "recent", "savings", "price", "reconstruct", "popular"] as const
export const Sort = Schema.Literal(...SORTS).annotations({
  message: oneOf(SORTS),
  description: "relevance (default with q): full-text rank; recent (default without q): newest first; " +
    "savings: savingsUsd descending; price: cheapest first; reconstruct: reconstructUsd descending; " +
    "popular: most purchases first"
})
export type Sort = typeof Sort.Type

export { DEFAULT_LIMIT, MAX_LIMIT } from "./Paging.ts"

const YEARS = "between the years 0001 and 9999"

/** A date, or a date-time with an optional offset (Z or ±HH:MM); `T` may be a space, as in RFC 3339. */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ]([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$/

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const daysIn = (year: number, month: number) =>
  month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : DAYS[month - 1]!

/**
 * An ISO 8601 date or date-time in the years 0001-9999 (PostgreSQL's reach and JavaScript's differ beyond them),
 * read as UTC unless it names an offset; anything else (`1`, `Jan 1 2026`, February 30) is refused, not guessed.
 */
const isoDate = (text: string): Date | undefined => {
  const parts = ISO_TIME.exec(text)
  if (parts === null) return undefined
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
  // JavaScript reads a date-time without an offset as local time; the desk reads it as UTC wherever it runs.
  const date = new Date(parts[4] !== undefined && parts[5] === undefined ? `${text}Z` : text)
  if (Number.isNaN(date.getTime())) return undefined
  // An offset can carry the time itself past the years (0001-01-01T00:00+01:00 is in year 0 in UTC).
  const utcYear = date.getUTCFullYear()
  return utcYear < 1 || utcYear > 9999 ? undefined : date
}

/** Whether `text` is an ISO 8601 time as `IsoTime` reads one. */
export const isIsoTime = (text: string): boolean => isoDate(text) !== undefined

export const IsoTime = Schema.transformOrFail(Schema.String, Schema.DateFromSelf, {
  strict: true,
  decode: (text, _, ast) => {
    const date = isoDate(text)
    return date !== undefined
      ? ParseResult.succeed(date)
      : ParseResult.fail(
        new ParseResult.Type(
          ast,
          text,
          `must be an ISO 8601 time ${YEARS}, such as 2026-01-31T00:00:00Z; got ${echo(text)}`
        )
      )
  },
  encode: (date) => ParseResult.succeed(date.toISOString())
}).annotations({
  // Not `format: date-time`, which a client checking it reads as refusing a date alone, which the desk takes.
  jsonSchema: {
    type: "string",
    pattern: ISO_TIME.source,
    description: "An ISO 8601 date (2026-01-31, midnight UTC) or date-time (2026-01-31T09:30:00Z; without an " +
      "offset read as UTC)"
  }
})

const usd = <I>(number: NumberInput<I>, description: string) =>
  number(UsdAmount).annotations({
    description,
    jsonSchema: { type: "number", minimum: 0, maximum: MAX_USD, description }
  })

/** A catalog query's fields, with numbers in the form their transport carries them. */
const discoverFields = <I>(number: NumberInput<I>) => ({
  q: Schema.optional(Text(200, "Full-text search over title, tags, teaser and contains claims")),
  tag: Schema.optional(
    Text(40, "Only handoffs with this tag (case-insensitive)").pipe(
      // Stored tags hold a visible character; one of only fillers (U+3164) would otherwise clean to no filter at all.
      Schema.filter((tag) => cleanLabel(tag) !== "", { message: rule("must hold a visible character") })
    )
  ),
  sort: Schema.optional(Sort),
  maxPrice: Schema.optional(usd(number, "Highest priceUsd")),
  minSavings: Schema.optional(usd(number, "Lowest savingsUsd")),
  minReconstruct: Schema.optional(usd(number, "Lowest reconstructUsd")),
  since: Schema.optional(IsoTime.annotations({
    jsonSchema: {
      type: "string",
      pattern: ISO_TIME.source,
      description: "Only handoffs filed at or after this time: an ISO 8601 date (2026-01-31, midnight UTC) or " +
        "date-time (2026-01-31T09:30:00Z; without an offset read as UTC)"
    }
  })),
  vendor: Schema.optional(Text(200, "provenance.vendor, case-insensitive exact match")),
  ...pagingFields(number),
  include: Schema.optional(
    Schema.Literal("demo").annotations({ description: "`demo` also lists demo packets", message: oneOf(["demo"]) })
  )
})

/** The filters a listing deeper than the result window is told to use instead. */
const NARROWED_BY = ["q", "tag", "maxPrice", "minSavings", "minReconstruct", "since", "vendor"]

/**
 * Query parameters of GET /api/discover and GET /api/handoffs (and of the HTML catalog); every one is optional.
 * The result window is part of the schema, so every front door that decodes with it refuses the same pages.
 */
export const DiscoverParams = withinResultWindow(
  Schema.Struct(discoverFields(fromText)).annotations({ parseOptions: { errors: "all" } }),
  NARROWED_BY
)

/** The same query as MCP arguments (search_handoffs): the same fields and rules, with numbers as JSON numbers. */
export const DiscoverArguments = withinResultWindow(
  Schema.Struct(discoverFields(asNumber)).annotations({ parseOptions: { errors: "all" } }),
  NARROWED_BY
)

export type DiscoverParams = typeof DiscoverParams.Type

/**
 * How a text query's words were matched (src/Catalog/Search.ts). `exact`: as websearch_to_tsquery reads `q` (every
 * word, stemmed; a quoted phrase, `or` and `-word` as it defines them). A query that matches nothing that way is
 * broadened, when it uses none of those operators: `prefix`, every one of its first BROADENED_WORDS words (stop
 * words left out) as the start of a word ("postgres slow" finds "PostgreSQL ... slower"); then, with more than
 * one, `any`: at least one of them, the handoffs holding more of them, closer together, ranked first.
 */
export const TEXT_MATCHES = ["exact", "prefix", "any"] as const
export type TextMatch = typeof TEXT_MATCHES[number]

/** At most this many of a query's words (stop words left out) are looked for when it is broadened. */
export const BROADENED_WORDS = 8

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
  const { limit, page } = pagingOf(params)
  return {
    q,
    tag: params.tag === undefined ? "" : cleanLabel(params.tag),
    sort: params.sort ?? (q === "" ? "recent" : "relevance"),
    maxPrice: params.maxPrice ?? null,
    minSavings: params.minSavings ?? null,
    minReconstruct: params.minReconstruct ?? null,
    since: params.since ?? null,
    vendor: params.vendor?.trim() ?? "",
    page,
    limit,
    includeDemo: params.include === "demo"
  }
}
