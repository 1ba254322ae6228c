import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import type { CatalogQuery } from "../Domain/Discover.ts"
import { HandoffRow, NewHandoff, PREVIEW_COLUMNS } from "./HandoffRow.ts"
import { search } from "./Search.ts"

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

const SealedWithBody = Schema.Struct({ ...SealedRow.fields, body: Schema.NullOr(Schema.String) })

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

  /**
   * A handoff's sealed fields with its body when `reader` may read it (its filer, or a holder of a receipt for it),
   * else with a null body: the check and the read in one statement.
   */
  const findSealedFor = SqlSchema.findOne({
    Request: Schema.Struct({ seq: Schema.Number, reader: Schema.String }),
    Result: SealedWithBody,
    execute: ({ reader, seq }) =>
      sql`SELECT h.seq, h.title, h.filer_did, h.price_micro, h.is_demo, h.hash,
          CASE WHEN h.filer_did = ${reader}
            OR EXISTS (SELECT 1 FROM receipts r WHERE r.handoff_seq = h.seq AND r.payer = ${reader}) THEN h.body END AS body
        FROM handoffs h WHERE h.seq = ${seq}`
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
    findSealedFor: (seq: number, reader: string) => Effect.orDie(findSealedFor({ seq, reader })),
    search: (query: CatalogQuery) => Effect.orDie(search(sql, query)),
    tagsInUse: Effect.orDie(Effect.map(tagsInUse(undefined), (rows) => rows.map((_) => _.tag))),
    tagStats: Effect.orDie(tagStats(undefined)),
    demoSeq: Effect.orDie(Effect.map(findDemoSeq(undefined), Option.map((_) => _.seq)))
  } as const
})

export class HandoffRepo extends Context.Tag("HandoffRepo")<HandoffRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(HandoffRepo, make)
}
