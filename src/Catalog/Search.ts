import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import { BROADENED_WORDS, type CatalogQuery } from "../Domain/Discover.ts"
import { DEFAULT_LIMIT, pageWithOnePast } from "../Domain/Paging.ts"
import { plannedRows } from "../PlannedRows.ts"
import { type HandoffRow, ListedRow, ListedRowWithTotal, previewJson } from "./HandoffRow.ts"
import { LISTING_MAX_BYTES } from "./ListingBudget.ts"

export interface CountLimits {
  /** Totals up to this many matches are exact. */
  readonly exactUpTo: number
  /** Above this planner estimate the matches are not counted at all: the estimate is the total. */
  readonly estimateTrustedAbove: number
  /** A text query with more matches than this is too broad to rank: its matches are listed newest first. */
  readonly rankedUpTo: number
  /**
   * How many of the newest handoffs a text query too broad to rank looks through for its page, in filing order,
   * before it asks the text index for every match instead.
   */
  readonly walkedUpTo: number
  /**
   * How many matches of a text query too broad to rank are held from its own read of the text index, to list
   * newest first when the walk does not find its page; a query with more reads the index again.
   */
  readonly heldUpTo: number
}

/**
 * Counting or ranking a match set costs a visit to every matching row: huge sets get PostgreSQL's estimate
 * instead of a count, and text queries too broad to mean much are listed by recency instead of relevance.
 */
export const COUNT_LIMITS: CountLimits = {
  exactUpTo: 1_000,
  estimateTrustedAbove: 10_000,
  rankedUpTo: 1_000,
  walkedUpTo: 10_000,
  heldUpTo: 5_000
}

export interface SearchResult {
  readonly rows: ReadonlyArray<HandoffRow>
  readonly total: number
  readonly totalIsEstimate: boolean
  /** Rows of the page the database left out, from its end, to keep the page within the listing budget. */
  readonly omitted: number
}

/**
 * How a listing reads its text query: as written (`exact`), or broadened, from the words PostgreSQL found in it
 * (`words`: lexemes, stemmed as the index stores them, stop words gone), all of them (`prefix`) or any (`any`).
 */
export type TextSearch =
  | { readonly match: "exact" }
  | { readonly match: "prefix" | "any"; readonly words: ReadonlyArray<string> }

const EXACT: TextSearch = { match: "exact" }

/**
 * A lexeme as tsquery text: quoted, and as a word start when it is at least 3 characters and not a number. A
 * shorter start or a number as one ("04", "co") matches much of the catalog and finds little it means, and reading
 * that part of the index was most of what a broadened query cost (at 100,000 handoffs "04:*" alone took 160 ms).
 */
const asStart = (lexeme: string) => {
  const quoted = `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`
  return [...lexeme].length < 3 || /^\p{N}+$/u.test(lexeme) ? quoted : `${quoted}:*`
}

const textQuery = (sql: SqlClient.SqlClient, q: string, text: TextSearch) =>
  text.match === "exact"
    ? sql`websearch_to_tsquery('english', ${q})`
    // The lexemes are the index's own, quoted: the tsquery reads them as they are, with no stemming again.
    : sql`${text.words.map(asStart).join(text.match === "prefix" ? " & " : " | ")}::tsquery`

const Broadening = Schema.Struct({ plain: Schema.Boolean, words: Schema.Array(Schema.String) })

/**
 * The words a query that matched nothing is broadened with, in the order written, at most BROADENED_WORDS; none
 * when it means something as written that a broadening would lose: a quoted phrase, `or`, `-word`, wherever
 * websearch_to_tsquery finds them (it reads `kafka(-networking` as excluding networking). Outside quotes it does
 * when its reading differs from plainto_tsquery's, which reads every word as a word and nothing else, but for
 * the words it joins as a phrase where plainto_tsquery joins them with AND: the parts of `nginx-ingress` or
 * `pg_stat_statements`, which are words to broaden like any other.
 */
const broadeningOf = (sql: SqlClient.SqlClient, q: string) =>
  q.includes("\"") ? Effect.succeed([]) : Effect.map(
    SqlSchema.single({
      Request: Schema.String,
      Result: Broadening,
      execute: (q) =>
        sql`SELECT replace(websearch_to_tsquery('english', ${q})::text, ' <-> ', ' & ')
            = plainto_tsquery('english', ${q})::text AS plain,
          coalesce((SELECT array_agg(lexeme ORDER BY positions[1], lexeme) FROM unnest(to_tsvector('english', ${q}))),
            '{}') AS words`
    })(q),
    ({ plain, words }) => (plain ? words.slice(0, BROADENED_WORDS) : [])
  )

const filters = (sql: SqlClient.SqlClient, query: CatalogQuery, text: TextSearch) => {
  const clauses = []
  if (!query.includeDemo) clauses.push(sql`NOT is_demo`)
  if (query.q !== "") clauses.push(sql`search @@ ${textQuery(sql, query.q, text)}`)
  if (query.tag !== "") clauses.push(sql`tags @> ARRAY[${query.tag}]::text[]`)
  if (query.maxPrice !== null) clauses.push(sql`price_micro <= ${query.maxPrice}`)
  if (query.minSavings !== null) clauses.push(sql`savings_micro >= ${query.minSavings}`)
  if (query.minReconstruct !== null) clauses.push(sql`reconstruct_micro >= ${query.minReconstruct}`)
  if (query.since !== null) clauses.push(sql`filed_at >= ${query.since}`)
  if (query.vendor !== "") clauses.push(sql`vendor = ${query.vendor.toLowerCase()}`)
  return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
}

/** The rows of a listing in its sort's order, each order an index's (migration 0007): `h` is the handoff. */
export const orderedRows = (sql: SqlClient.SqlClient, query: CatalogQuery, text: TextSearch = EXACT) => {
  const where = filters(sql, query, text)
  switch (query.sort) {
    case "relevance":
    case "recent":
      return sql`FROM handoffs h WHERE ${where} ORDER BY h.filed_at DESC, h.seq DESC`
    case "savings":
      return sql`FROM handoffs h WHERE ${where} ORDER BY h.savings_micro DESC, h.seq DESC`
    case "price":
      return sql`FROM handoffs h WHERE ${where} ORDER BY h.price_micro ASC, h.seq DESC`
    case "reconstruct":
      return sql`FROM handoffs h WHERE ${where} ORDER BY h.reconstruct_micro DESC, h.seq DESC`
    case "popular":
      // handoff_sales holds each handoff's sale count (migration 0027), with an index of its own for this order.
      return sql`FROM handoffs h JOIN handoff_sales s ON s.handoff_seq = h.seq WHERE ${where}
        ORDER BY s.sales DESC, s.handoff_seq DESC`
  }
}

/**
 * A listing filtered by one tag and nothing else (the demo left out): its total is the tag's kept counter,
 * exact at any size and read without visiting a match. Filing stores each handoff's tags once, so the counter
 * counts handoffs.
 */
const byTagAlone = (query: CatalogQuery) =>
  query.tag !== "" && query.q === "" && !query.includeDemo && query.maxPrice === null &&
  query.minSavings === null && query.minReconstruct === null && query.since === null && query.vendor === ""

/** The sorts `tag_listing` keeps (migration 0019), by the column each orders by. */
const TAG_LISTING_KEYS: Partial<Record<CatalogQuery["sort"], string>> = {
  relevance: "filed_at",
  recent: "filed_at",
  savings: "savings_micro"
}

/**
 * Whether the query is a listing by one tag alone in a sort `tag_listing` keeps: a page of it, however deep, is
 * a walk of as many of the tag's index entries (5-16 ms 10,000 results into a tag at 1,000,000 handoffs).
 */
export const readsTagListing = (query: CatalogQuery) => byTagAlone(query) && TAG_LISTING_KEYS[query.sort] !== undefined

/**
 * The rows of a listing by one tag alone, for the sorts `tag_listing` keeps: the page's seqs from an index of the
 * tag's own entries, in the order `orderedRows` gives, then their handoffs. Other sorts: none.
 */
export const tagListingRows = (sql: SqlClient.SqlClient, query: CatalogQuery, page: Statement.Fragment) => {
  const column = TAG_LISTING_KEYS[query.sort]
  if (column === undefined) return undefined
  const key = sql.literal(column)
  return sql`FROM (SELECT seq, ${key} AS key FROM tag_listing WHERE tag = ${query.tag}
      ORDER BY ${key} DESC, seq DESC ${page}) l
    JOIN handoffs h ON h.seq = l.seq ORDER BY l.key DESC, l.seq DESC`
}

/** Where the page starts among the matches, and the LIMIT that reads it with one row past it. */
const paging = (sql: SqlClient.SqlClient, query: CatalogQuery) => {
  const offset = (query.page - 1) * query.limit
  return { offset, page: sql`LIMIT ${query.limit + 1} OFFSET ${offset}` }
}

/**
 * The rows of a page of `orderedRows` (`page`: its LIMIT and OFFSET), as a FROM clause of the handoffs `h`. A page
 * that skips more rows than it reads finds its rows' seqs first and reads their handoffs after: PostgreSQL builds
 * a row's select list before OFFSET skips it, so the preview's JSON was built for every skipped row (at 1,000,000
 * handoffs a page 10,000 results in, newest first: 165 ms of the statement's 175, against 10.6 ms for the whole
 * statement so). A page that skips fewer reads its rows directly, the handoffs' second read costing it more than
 * the previews it skips.
 */
const pageRows = (
  sql: SqlClient.SqlClient,
  query: CatalogQuery,
  text: TextSearch,
  { offset, page }: { readonly offset: number; readonly page: Statement.Fragment }
) =>
  offset <= query.limit
    ? sql`${orderedRows(sql, query, text)} ${page}`
    // The page's order is carried out as `ord`: numbered as its rows come, in the order the inner statement gives.
    : sql`FROM (SELECT seq, row_number() OVER () AS ord FROM (SELECT h.seq ${orderedRows(sql, query, text)} ${page})
        skipped) p JOIN handoffs h ON h.seq = p.seq ORDER BY p.ord`

/** Whether a listing's page is cut to the listing budget in the database (`withinBudget`): one above the default. */
const cutInDatabase = (query: CatalogQuery) => query.limit > DEFAULT_LIMIT

/**
 * At most the bytes `h`'s preview weighs in a listing's answer: the texts the answer carries as they are (JSON's
 * escapes only add to them), nothing else. Not the database's own JSON of the row, which can weigh more than the
 * answer (jsonb writes 5e-324 as 326 digits, its spacing is not the answer's), and so cut a page short of what fits.
 */
const ANSWER_BYTES_AT_LEAST = `coalesce(octet_length(h.title) + octet_length(h.teaser) + octet_length(h.filer)
  + octet_length(h.filer_did) + octet_length(h.why_pay) + octet_length(h.hash)
  + octet_length(array_to_string(h.tags, '')) + octet_length(array_to_string(h.contains, ''))
  + octet_length(array_to_string(h.does_not_contain, '')), 0)`

/**
 * The preview of `h`, the handoff a listing statement reads, as one JSON object (`previewJson`), and where the page
 * is cut in the database the least it weighs in the answer (`weight`).
 */
const previewColumns = (sql: SqlClient.SqlClient, query: CatalogQuery) =>
  sql.literal(
    cutInDatabase(query) ? `${previewJson("h")}, ${ANSWER_BYTES_AT_LEAST} AS weight` : previewJson("h")
  )

/**
 * A listing statement's rows as far as the listing budget reaches, cut in the database when the page is larger
 * than the default: each row whose page rows before it weigh at least LISTING_MAX_BYTES in the answer
 * (`weight`, a bound from below) is left out, and every row has `page_rows`, how many rows the statement read. A
 * page of a hundred of the largest previews (about 70 KB each) was read whole, 7 MB parsed by the desk (tens of
 * milliseconds of its CPU) to be cut to fifteen: an amplification anyone who files such handoffs could ask for
 * again and again; now about twenty rows come. With the weight never above a row's size in the answer, the cut
 * falls at or past the one `fitListing` then makes exactly, and the first row is always handed over. A page of
 * the default size (at most 21 rows, 2.3 MB at worst) is read whole: the windows cost its statement's usual pages
 * 5-8 % of throughput (bench:compare, discover by text and tag).
 * The windows take the rows in the statement's order: with no ORDER BY or PARTITION of their own PostgreSQL
 * sorts nothing between the statement and them (test/catalog/ListingBudget.test.ts reads such pages in order).
 * Only the preview, `page_rows` and (`withTotal`) the statement's `total` come back: each column more is parsed
 * for every row.
 */
const withinBudget = <A extends object>(
  sql: SqlClient.SqlClient,
  query: CatalogQuery,
  statement: Statement.Statement<A>,
  withTotal: boolean
): Statement.Statement<A> =>
  !cutInDatabase(query) ? statement : sql<A>`SELECT preview, page_rows${sql.literal(withTotal ? ", total" : "")} FROM (
      SELECT listed.*, count(*) OVER () AS page_rows,
        sum(listed.weight) OVER (ROWS UNBOUNDED PRECEDING) - listed.weight AS weighed_before
      FROM (${statement}) listed
    ) budgeted WHERE weighed_before < ${LISTING_MAX_BYTES}`

const Total = Schema.Struct({ total: DbInt })

/**
 * One page of a catalog search, with its total, in few statements. A listing by one tag alone is one statement,
 * its total the tag's kept counter, its page (newest or savings first) from the tag's own index entries.
 * Otherwise the planner's estimate of the matches comes first (EXPLAIN: planning only, no rows read), then:
 * - a text query by relevance or newest first whose estimate is not above `estimateTrustedAbove` takes one
 *   statement (`textPage`): it reads at most `rankedUpTo` (relevance) or `exactUpTo` (newest first) + 1
 *   candidates, counting them; when that is all of them it orders them and the page comes with its exact total;
 *   otherwise the same statement lists its matches newest first (too broad to rank), with the estimate as the
 *   total;
 * - a text query the estimate alone says is broad is listed newest first, like the other sorts;
 * - a large match set is not counted (the total is the estimate); a smaller one is counted in the page's
 *   statement, exactly up to `exactUpTo` matches.
 * One row past the page is read, so a following page is never hidden by an estimate that is too low.
 */
const searchAs = (sql: SqlClient.SqlClient, query: CatalogQuery, limits: CountLimits, text: TextSearch) =>
  Effect.gen(function*() {
    const where = filters(sql, query, text)
    const paged = paging(sql, query)
    const { offset, page } = paged
    const columns = previewColumns(sql, query)
    const capped = (cap: number) =>
      sql`(SELECT count(*) FROM (SELECT 1 FROM handoffs WHERE ${where} LIMIT ${cap + 1}) capped)`
    const result = (rows: ReadonlyArray<ListedRow>, total: number, totalIsEstimate: boolean): SearchResult => {
      const read = rows[0]?.page_rows ?? rows.length
      return {
        ...pageWithOnePast(rows, { offset, limit: query.limit }, total, read),
        totalIsEstimate,
        omitted: Math.min(read, query.limit) - Math.min(rows.length, query.limit)
      }
    }
    // A page past the end has no row to carry the total: it is read on its own.
    const totalAlone = (total: Statement.Fragment) =>
      Effect.map(
        SqlSchema.single({ Request: Schema.Void, Result: Total, execute: () => sql`SELECT ${total} AS total` })(
          undefined
        ),
        (_) => _.total
      )
    const countedAlone = (cap: number) => totalAlone(capped(cap))
    const exactOrNot = (total: number, estimate: number) =>
      total > limits.exactUpTo ? { total: Math.max(total, estimate), estimated: true } : { total, estimated: false }

    if (byTagAlone(query)) {
      // Kept per tag by triggers in each filing's transaction (migration 0011), for the handoffs not the demo.
      const tally = sql`(SELECT coalesce(sum(packets), 0) FROM tag_tally WHERE tag = ${query.tag})`
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: ListedRowWithTotal,
        execute: () => {
          const listed = tagListingRows(sql, query, page)
          return withinBudget(
            sql,
            query,
            listed === undefined
              ? sql`SELECT ${columns}, ${tally} AS total ${pageRows(sql, query, EXACT, paged)}`
              : sql`SELECT ${columns}, ${tally} AS total ${listed}`,
            true
          )
        }
      })(undefined)
      return result(rows, rows.length > 0 || offset === 0 ? rows[0]?.total ?? 0 : yield* totalAlone(tally), false)
    }

    const planned = yield* plannedRows(sql, sql`FROM handoffs WHERE ${where}`)
    const byText = query.q !== "" && (query.sort === "relevance" || query.sort === "recent")
    if (byText && planned <= limits.estimateTrustedAbove) {
      const cap = query.sort === "relevance" ? limits.rankedUpTo : limits.exactUpTo
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: ListedRowWithTotal,
        execute: () => withinBudget(sql, query, textPage(sql, query, text, cap, limits), true)
      })(undefined)
      const total = rows.length > 0 || offset === 0 ? rows[0]?.total ?? 0 : yield* countedAlone(cap)
      return total <= cap ? result(rows, total, false) : result(rows, Math.max(planned, total), true)
    }
    const ordered = pageRows(sql, query, text, paged)
    if (planned > limits.estimateTrustedAbove) {
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: ListedRow,
        execute: () => withinBudget(sql, query, sql`SELECT ${columns} ${ordered}`, false)
      })(undefined)
      return result(rows, planned, true)
    }
    const rows = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: ListedRowWithTotal,
      execute: () =>
        withinBudget(
          sql,
          query,
          sql`SELECT ${columns}, ${capped(limits.exactUpTo)} AS total ${ordered}`,
          true
        )
    })(undefined)
    const total = rows.length > 0 || offset === 0 ? rows[0]?.total ?? 0 : yield* countedAlone(limits.exactUpTo)
    const { estimated, total: reported } = exactOrNot(total, planned)
    return result(rows, reported, estimated)
  })

/**
 * One page of a catalog search (`searchAs`), with how its text matched: a text query that matches nothing as
 * written is tried again broadened (`broadeningOf`): every word as a word start, then (two words or more) any of
 * them; the first way that finds a handoff gives the page. Whether a way found one is read from its page, not its
 * total (a total above `estimateTrustedAbove` is the planner's estimate, never 0): a first page with no row found
 * nothing, and a later one asks. So each page of a query is found the same way, and a first page that finds
 * nothing says 0, whatever the estimate.
 */
export const search = (sql: SqlClient.SqlClient, query: CatalogQuery, limits: CountLimits = COUNT_LIMITS) =>
  Effect.gen(function*() {
    const found = (text: TextSearch, result: SearchResult) => {
      if (result.rows.length > 0) return Effect.succeed(true)
      if (query.page === 1) return Effect.succeed(false)
      if (!result.totalIsEstimate) return Effect.succeed(result.total > 0)
      // A later page with no row and an estimated total: whether anything matches at all is asked.
      return Effect.map(
        SqlSchema.single({
          Request: Schema.Void,
          Result: Schema.Struct({ found: Schema.Boolean }),
          execute: () => sql`SELECT EXISTS (SELECT 1 FROM handoffs WHERE ${filters(sql, query, text)}) AS found`
        })(undefined),
        (_) => _.found
      )
    }
    const answer = (text: TextSearch, result: SearchResult) => ({
      ...(query.page === 1 && result.rows.length === 0 ? { ...result, total: 0, totalIsEstimate: false } : result),
      match: text.match
    })
    const exact = yield* searchAs(sql, query, limits, EXACT)
    if (query.q === "" || (yield* found(EXACT, exact))) return answer(EXACT, exact)
    const words = yield* broadeningOf(sql, query.q)
    if (words.length === 0) return answer(EXACT, exact)
    const prefix: TextSearch = { match: "prefix", words }
    const byPrefix = yield* searchAs(sql, query, limits, prefix)
    if (words.length === 1 || (yield* found(prefix, byPrefix))) return answer(prefix, byPrefix)
    const any: TextSearch = { match: "any", words }
    return answer(any, yield* searchAs(sql, query, limits, any))
  })

/**
 * The page of a text query sorted by relevance or newest first, in one statement, each row with the candidates
 * counted (at most `cap` + 1). Its branches are gated on that count, so PostgreSQL runs only the one it needs:
 * - at most `cap` candidates: they are all the matches, ordered (ranked, or by date);
 * - more (too broad to rank): its newest matches, first looked for among the `walkedUpTo` newest handoffs in the
 *   filing-order index (matches found in index order are the newest there are, and a broad query finds a page
 *   there after a few thousand rows), and only when those do not hold the page, from every match: read on from
 *   the count's own read of the text index when there are at most `heldUpTo`, from the index again otherwise.
 *   The planner cannot know a query is broad (it multiplies the words' frequencies as if independent, so
 *   "mysql optimizer hint" looks rare), and left alone it fetched and sorted all of the thousands of matches:
 *   at 1,000,000 handoffs 80-125 ms for such a query, 3-12 ms walking the index.
 * Ranking waits for the count too: a broad query no longer ranks a thousand candidates to be listed by date.
 * `matches` is read only as far as a branch asks (a CTE's rows are produced as its readers need them): the count
 * reads `cap` + 1 of them, and the rest only when the walk came up short. Its bitmap of the text index, built
 * once, is then not built a second time: at 1,000,000 handoffs that second bitmap was 18-26 ms of the 65-76 ms
 * such a query took (docs/benchmark.md). Its limit keeps what it holds small (relevance's candidates bring their
 * tsvectors) and the statement's estimated cost under PostgreSQL's JIT threshold: unlimited, a broad word's
 * estimate had it compiled for 48 ms.
 */
const textPage = (
  sql: SqlClient.SqlClient,
  query: CatalogQuery,
  text: TextSearch,
  cap: number,
  limits: CountLimits
) => {
  const where = filters(sql, query, text)
  const { offset, page } = paging(sql, query)
  const wanted = offset + query.limit + 1
  const held = Math.max(limits.heldUpTo, cap)
  const broad = sql`(SELECT total FROM counted) > ${cap}`
  const short = sql`${broad} AND NOT (SELECT found FROM enough)`
  // Both orders are a key descending, then seq descending; candidates keep the column their key needs, which
  // matches carry beside the date every broad listing orders by.
  const [kept, key, carried] = query.sort === "relevance"
    ? [sql`search`, sql`ts_rank_cd(search, ${textQuery(sql, query.q, text)})`, sql`, search`]
    : [sql`filed_at`, sql`filed_at`, sql``]
  return sql`WITH matches AS MATERIALIZED (
      SELECT seq, filed_at${carried} FROM handoffs WHERE ${where} LIMIT ${held + 1}
    ), candidates AS MATERIALIZED (SELECT seq, ${kept} FROM matches LIMIT ${cap + 1}),
    counted AS (SELECT count(*) AS total FROM candidates),
    walked AS MATERIALIZED (
      SELECT seq, filed_at FROM (
        SELECT * FROM handoffs ORDER BY filed_at DESC, seq DESC LIMIT ${limits.walkedUpTo}
      ) handoffs WHERE ${broad} AND ${where} ORDER BY filed_at DESC, seq DESC LIMIT ${wanted}
    ), enough AS (SELECT count(*) = ${wanted} AS found FROM walked),
    holding AS (SELECT count(*) <= ${held} AS everything FROM matches WHERE ${short})
    SELECT ${previewColumns(sql, query)}, counted.total FROM (
      SELECT seq, row_number() OVER (ORDER BY key DESC, seq DESC) AS ord FROM (
        SELECT seq, ${key} AS key FROM candidates WHERE NOT ${broad} ORDER BY key DESC, seq DESC ${page}
      ) ordered
      UNION ALL
      SELECT seq, row_number() OVER (ORDER BY filed_at DESC, seq DESC) FROM (
        SELECT seq, filed_at FROM walked WHERE (SELECT found FROM enough) ORDER BY filed_at DESC, seq DESC ${page}
      ) newest
      UNION ALL
      SELECT seq, row_number() OVER (ORDER BY filed_at DESC, seq DESC) FROM (
        SELECT seq, filed_at FROM matches WHERE ${short} AND (SELECT everything FROM holding)
        ORDER BY filed_at DESC, seq DESC ${page}
      ) older_held
      UNION ALL
      SELECT seq, row_number() OVER (ORDER BY filed_at DESC, seq DESC) FROM (
        SELECT seq, filed_at FROM handoffs WHERE ${short} AND NOT (SELECT everything FROM holding) AND ${where}
        ORDER BY filed_at DESC, seq DESC ${page}
      ) older
    ) m JOIN handoffs h ON h.seq = m.seq CROSS JOIN counted
    ORDER BY m.ord`
}
