import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import type { CatalogQuery } from "../Domain/Discover.ts"
import { HandoffRow, NewHandoff, PREVIEW_COLUMNS } from "./HandoffRow.ts"

const TagStat = Schema.Struct({
  tag: Schema.String,
  packets: DbInt,
  unlocks: DbInt,
  avg_reconstruct_micro: DbInt
})
export type TagStat = typeof TagStat.Type

/** What selling a handoff needs; the body is read only to hand it to a buyer who holds an unlock. */
export const SealedRow = Schema.Struct({
  seq: DbInt,
  title: Schema.String,
  filer_did: Schema.String,
  price_micro: DbInt,
  is_demo: Schema.Boolean,
  hash: Schema.String
})
export type SealedRow = typeof SealedRow.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(PREVIEW_COLUMNS.join(", "))

  const insertInto = (row: NewHandoff) =>
    sql`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, minutes,
        tags, contains, does_not_contain, why_pay, provenance, origin, is_demo, hash, body_chars)
      VALUES (${row.title}, ${row.teaser}, ${row.body}, ${row.filer}, ${row.filer_did}, ${row.price_micro},
        ${row.reconstruct_micro}, ${row.minutes}, ${row.tags}::text[], ${row.contains}::text[],
        ${row.does_not_contain}::text[], ${row.why_pay},
        ${row.provenance === null ? null : JSON.stringify(row.provenance)}::jsonb,
        ${row.origin}, ${row.is_demo}, ${row.hash}, ${row.body_chars})`

  const insert = SqlSchema.single({
    Request: NewHandoff,
    Result: HandoffRow,
    execute: (row) => sql`${insertInto(row)} RETURNING ${columns}`
  })

  // Two desks starting at once may both try; the partial unique index lets exactly one in.
  const insertDemo = (row: NewHandoff) => sql`${insertInto(row)} ON CONFLICT (is_demo) WHERE is_demo DO NOTHING`

  const findBySeq = SqlSchema.findOne({
    Request: Schema.Number,
    Result: HandoffRow,
    execute: (seq) => sql`SELECT ${columns} FROM handoffs WHERE seq = ${seq}`
  })

  const findSealed = SqlSchema.findOne({
    Request: Schema.Number,
    Result: SealedRow,
    execute: (seq) => sql`SELECT seq, title, filer_did, price_micro, is_demo, hash FROM handoffs WHERE seq = ${seq}`
  })

  const findBody = SqlSchema.findOne({
    Request: Schema.Number,
    Result: Schema.Struct({ body: Schema.String }),
    execute: (seq) => sql`SELECT body FROM handoffs WHERE seq = ${seq}`
  })

  const filters = (query: CatalogQuery) => {
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

  const orderBy = (query: CatalogQuery) => {
    switch (query.sort) {
      case "relevance":
        return query.q === ""
          ? sql`filed_at DESC, seq DESC`
          : sql`ts_rank_cd(search, websearch_to_tsquery('english', ${query.q})) DESC, seq DESC`
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

  const search = (query: CatalogQuery) =>
    Effect.all({
      rows: SqlSchema.findAll({
        Request: Schema.Void,
        Result: HandoffRow,
        execute: () =>
          sql`SELECT ${columns} FROM handoffs WHERE ${filters(query)} ORDER BY ${orderBy(query)}
            LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`
      })(undefined),
      total: SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ total: DbInt }),
        execute: () => sql`SELECT count(*) AS total FROM handoffs WHERE ${filters(query)}`
      })(undefined).pipe(Effect.map((_) => _.total))
    })

  const tagsInUse = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ tag: Schema.String }),
    execute: () => sql`SELECT DISTINCT unnest(tags) AS tag FROM handoffs WHERE NOT is_demo ORDER BY tag`
  })

  const tagStats = SqlSchema.findAll({
    Request: Schema.Void,
    Result: TagStat,
    execute: () =>
      sql`SELECT tag, count(*) AS packets, coalesce(sum(purchases), 0) AS unlocks,
          round(avg(reconstruct_micro))::bigint AS avg_reconstruct_micro
        FROM handoffs, unnest(tags) AS tag
        WHERE NOT is_demo
        GROUP BY tag ORDER BY unlocks DESC, packets DESC, tag LIMIT 50`
  })

  const findDemoSeq = SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ seq: DbInt }),
    execute: () => sql`SELECT seq FROM handoffs WHERE is_demo`
  })

  return {
    insert: (row: NewHandoff) => Effect.orDie(insert(row)),
    insertDemo: (row: NewHandoff) => Effect.orDie(insertDemo(row)),
    findBySeq: (seq: number) => Effect.orDie(findBySeq(seq)),
    findSealed: (seq: number) => Effect.orDie(findSealed(seq)),
    findBody: (seq: number) => Effect.orDie(Effect.map(findBody(seq), Option.map((_) => _.body))),
    search: (query: CatalogQuery) => Effect.orDie(search(query)),
    tagsInUse: Effect.orDie(Effect.map(tagsInUse(undefined), (rows) => rows.map((_) => _.tag))),
    tagStats: Effect.orDie(tagStats(undefined)),
    demoSeq: Effect.orDie(Effect.map(findDemoSeq(undefined), Option.map((_) => _.seq)))
  } as const
})

export class HandoffRepo extends Context.Tag("HandoffRepo")<HandoffRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(HandoffRepo, make)
}
