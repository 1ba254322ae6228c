import { Schema } from "effect"
import { keptExactly } from "./Decimal.ts"
import { rule } from "./Issues.ts"

export const MAX_LIMIT = 100
export const DEFAULT_LIMIT = 20

/**
 * The deepest result any listing reaches (offset + limit): reading past it costs the database every row before
 * it, so a deeper page is a 422 asking for a narrower query rather than a slow statement.
 */
export const RESULT_WINDOW = 10_000

/** How a number arrives: as text in a URL query, as a JSON number in MCP arguments. */
export type NumberInput<I> = <A>(schema: Schema.Schema<A, number>) => Schema.Schema<A, I>

/** A number in a URL is written in decimal: no `0x10`, `1e2`, `Infinity`, blanks or an empty value. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/
/** `+1`, `.5` and `5.` as a JSON number writes them: `1`, `0.5`, `5`. */
const asJsonLiteral = (text: string) => text.replace(/^\+/, "").replace(/^(-?)\./, "$10.").replace(/\.$/, "")
const NumberFromText = Schema.compose(
  Schema.String.pipe(
    Schema.pattern(DECIMAL, { message: rule("must be a number in decimal digits") }),
    // As a JSON body's numbers are (src/Http/LossyNumbers.ts): `0.1000000000000000001` would be read as 0.1, and a
    // rule on the value ("at most 6 decimals") would never see what was sent.
    Schema.filter((text) => keptExactly(asJsonLiteral(text)), {
      message: rule("has more digits than a number holds: send it with at most 15 significant digits")
    })
  ),
  Schema.NumberFromString.annotations({ message: rule("must be a number in decimal digits") })
)

export const fromText: NumberInput<string> = (schema) => Schema.compose(NumberFromText, schema)
export const asNumber: NumberInput<number> = (schema) => schema

const PageNumber = Schema.Number.pipe(
  Schema.filter((n) => Number.isInteger(n) && n >= 1 && n <= 1e9, {
    message: rule("must be a whole number from 1 to 1000000000"),
    jsonSchema: { type: "integer", minimum: 1, maximum: 1e9 }
  })
)

/** `page` and `limit`, in either form. */
export const pagingFields = <I>(number: NumberInput<I>) => ({
  page: Schema.optional(number(PageNumber).annotations({ description: "1-based page, default 1" })),
  limit: Schema.optional(
    number(PageNumber).annotations({
      description:
        `Page size, default ${DEFAULT_LIMIT}, capped at ${MAX_LIMIT}; page × limit may not pass ${RESULT_WINDOW}`
    })
  )
})

export interface Paging {
  readonly page: number
  readonly limit: number
  readonly offset: number
}

export const pagingOf = (
  params: { readonly page?: number | undefined; readonly limit?: number | undefined }
): Paging => {
  const page = params.page ?? 1
  const limit = Math.min(params.limit ?? DEFAULT_LIMIT, MAX_LIMIT)
  return { page, limit, offset: (page - 1) * limit }
}

/** Pages a reader can reach: all of them, up to the result window. */
export const pagesOf = (total: number, limit: number) =>
  Math.min(Math.ceil(total / limit), Math.floor(RESULT_WINDOW / limit))

/**
 * The result window as a rule on a query's schema, reported on `page` so that the issue names what to change:
 * `narrowedBy`, the query's own filters.
 */
export const withinResultWindow = <S extends Schema.Schema.Any>(schema: S, narrowedBy: ReadonlyArray<string>) =>
  schema.pipe(
    Schema.filter((params: { readonly page?: number | undefined; readonly limit?: number | undefined }) => {
      const { limit, offset } = pagingOf(params)
      return offset + limit <= RESULT_WINDOW || {
        path: ["page"],
        message:
          `page ${params.page} of ${limit} reaches past result ${RESULT_WINDOW}, the deepest any listing goes; ` +
          `narrow the query (${narrowedBy.join(", ")}) instead of paging further`
      }
    })
  )

/**
 * A page read with one row past it (LIMIT limit + 1): the page's rows, and a total never below the rows seen, the
 * one past the page included, so `pagesOf` shows a following page whatever an estimated total says. `read` is how
 * many rows the statement found, when it handed over fewer (a listing cut to its budget).
 */
export const pageWithOnePast = <A>(
  rows: ReadonlyArray<A>,
  paging: Omit<Paging, "page">,
  total: number,
  read: number = rows.length
) => ({
  rows: rows.slice(0, paging.limit),
  total: Math.max(total, read === 0 ? 0 : paging.offset + Math.min(read, paging.limit + 1))
})
