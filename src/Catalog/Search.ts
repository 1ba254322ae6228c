import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import type { CatalogQuery } from "../Domain/Discover.ts"
import { HandoffRow, PREVIEW_COLUMNS } from "./HandoffRow.ts"

export interface CountLimits {
  /** Totals up to this many matches are exact. */
  readonly exactUpTo: number
  /** Above this planner estimate the matches are not counted at all: the estimate is the total. */
  readonly estimateTrustedAbove: number
}

/** Counting a match set costs a visit to every matching row: huge sets get PostgreSQL's estimate instead. */
export const COUNT_LIMITS: CountLimits = { exactUpTo: 1_000, estimateTrustedAbove: 10_000 }

export interface SearchResult {
  readonly rows: ReadonlyArray<HandoffRow>
  readonly total: number
  readonly totalIsEstimate: boolean
}

const filters = (sql: SqlClient.SqlClient, query: CatalogQuery) => {
  const clauses = []
  if (!query.includeDemo) clauses.push(sql`NOT is_demo`)
  if (query.q !== "") clauses.push(sql`search @@ websearch_to_tsquery('english', ${query.q})`)
  if (query.tag !== "") clauses.push(sql`tags @> ARRAY[${query.tag}]::text[]`)
  if (query.maxPrice !== null) clauses.push(sql`price_micro <= ${query.maxPrice}`)
  if (query.minSavings !== null) clauses.push(sql`savings_micro >= ${query.minSavings}`)
  if (query.minReconstruct !== null) clauses.push(sql`reconstruct_micro >= ${query.minReconstruct}`)
  if (query.since !== null) clauses.push(sql`filed_at >= ${query.since}`)
  if (query.vendor !== "") clauses.push(sql`vendor = ${query.vendor.toLowerCase()}`)
  return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
}

const orderBy = (sql: SqlClient.SqlClient, query: CatalogQuery) => {
  switch (query.sort) {
    case "relevance":
    case "recent":
      return sql`filed_at DESC, seq DESC`
    case "savings":
      return sql`savings_micro DESC, seq DESC`
    case "price":
      return sql`price_micro ASC, seq DESC`
    case "reconstruct":
      return sql`reconstruct_micro DESC, seq DESC`
    case "popular":
      return sql`purchases DESC, seq DESC`
  }
}

const Total = Schema.Struct({ total: DbInt })
const WithTotal = Schema.Struct({ ...HandoffRow.fields, ...Total.fields })
const PlanRows = Schema.Struct({ "Plan Rows": Schema.Number })
const Explained = Schema.Struct({
  "QUERY PLAN": Schema.Union(
    Schema.Tuple(Schema.Struct({ Plan: PlanRows })),
    Schema.parseJson(Schema.Tuple(Schema.Struct({ Plan: PlanRows })))
  )
})

/**
 * One page of a catalog search, with its total, in as few statements as the query allows:
 * - ranked by relevance, every match is ranked anyway, so counting them is free: one statement, exact total;
 * - otherwise the planner's estimate decides: a large match set is not counted (the total is the estimate);
 *   a smaller one is counted in the page's statement, exactly up to `exactUpTo` matches.
 * One row past the page is read, so a following page is never hidden by an estimate that is too low.
 */
export const search = (sql: SqlClient.SqlClient, query: CatalogQuery, limits: CountLimits = COUNT_LIMITS) =>
  Effect.gen(function*() {
    const where = filters(sql, query)
    const offset = (query.page - 1) * query.limit
    const columns = sql.literal(PREVIEW_COLUMNS.map((column) => `h.${column}`).join(", "))
    const capped = sql`(SELECT count(*) FROM (SELECT 1 FROM handoffs WHERE ${where} LIMIT ${limits.exactUpTo + 1}) capped)`
    const result = (rows: ReadonlyArray<HandoffRow>, total: number, totalIsEstimate: boolean): SearchResult => {
      const more = rows.length > query.limit
      const seen = rows.length === 0 ? 0 : offset + Math.min(rows.length, query.limit) + (more ? 1 : 0)
      return { rows: rows.slice(0, query.limit), total: Math.max(total, seen), totalIsEstimate }
    }
    // A page past the end has no row to carry the total: count on their own.
    const counted = (rows: ReadonlyArray<{ readonly total: number }>, estimate: number) =>
      Effect.map(
        rows.length > 0 || offset === 0
          ? Effect.succeed(rows[0]?.total ?? 0)
          : Effect.map(SqlSchema.single({ Request: Schema.Void, Result: Total, execute: () => sql`SELECT ${capped} AS total` })(undefined), (_) => _.total),
        (total) => total > limits.exactUpTo ? { total: Math.max(total, estimate), estimated: true } : { total, estimated: false }
      )

    if (query.sort === "relevance" && query.q !== "") {
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: WithTotal,
        execute: () =>
          sql`SELECT ${columns}, m.total FROM (
              SELECT seq, rank, count(*) OVER () AS total FROM (
                SELECT seq, ts_rank_cd(search, websearch_to_tsquery('english', ${query.q})) AS rank
                FROM handoffs WHERE ${where}
              ) ranked
              ORDER BY rank DESC, seq DESC LIMIT ${query.limit + 1} OFFSET ${offset}
            ) m JOIN handoffs h ON h.seq = m.seq
            ORDER BY m.rank DESC, m.seq DESC`
      })(undefined)
      if (rows.length > 0) return result(rows, rows[0]!.total, false)
      const { estimated, total } = yield* counted(rows, 0)
      return result(rows, total, estimated)
    }

    const plan = yield* SqlSchema.single({
      Request: Schema.Void,
      Result: Explained,
      execute: () => sql`EXPLAIN (FORMAT JSON) SELECT 1 FROM handoffs WHERE ${where}`
    })(undefined)
    const estimate = Math.round(plan["QUERY PLAN"][0].Plan["Plan Rows"])
    const ordered = sql`FROM handoffs h WHERE ${where} ORDER BY ${orderBy(sql, query)}
      LIMIT ${query.limit + 1} OFFSET ${offset}`
    if (estimate > limits.estimateTrustedAbove) {
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: HandoffRow,
        execute: () => sql`SELECT ${columns} ${ordered}`
      })(undefined)
      return result(rows, estimate, true)
    }
    const rows = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: WithTotal,
      execute: () => sql`SELECT ${columns}, ${capped} AS total ${ordered}`
    })(undefined)
    const { estimated, total } = yield* counted(rows, estimate)
    return result(rows, total, estimated)
  })
