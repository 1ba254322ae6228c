import { SqlClient, SqlError, SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Data, Duration, Effect, FiberSet, Layer, Option, Schema } from "effect"
import { boarding } from "../Boarding.ts"
import { DbInt } from "../Domain/DbTypes.ts"
import type { CatalogQuery } from "../Domain/Discover.ts"
import { isUniqueViolation } from "../Sql.ts"
import { SILENT_GRACE_MS, statementTimeoutConfig } from "../Storage.ts"
import { HandoffRowDecoded, NewHandoff, previewJson } from "./HandoffRow.ts"
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
  teaser: Schema.String,
  filer_did: Schema.String,
  price_micro: DbInt,
  is_demo: Schema.Boolean,
  hash: Schema.String
})
export type SealedRow = typeof SealedRow.Type

const SealedWithBody = Schema.Struct({
  ...SealedRow.fields,
  body: Schema.NullOr(Schema.String),
  /** Whether the reader chose to read only by signing in with its wallet (agents.require_sign_in). */
  reader_requires_sign_in: Schema.Boolean
})

/** An insert refused by the unique body key: another handoff lists this body (the constraint is the backstop). */
export class BodyTaken extends Data.TaggedError("BodyTaken")<{ readonly bodyKey: string }> {}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const preview = sql.literal(previewJson())

  const insertInto = (row: NewHandoff) =>
    sql`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, minutes,
        tags, contains, does_not_contain, why_pay, provenance, origin, is_demo, hash, body_key, body_chars)
      VALUES (${row.title}, ${row.teaser}, ${row.body}, ${row.filer}, ${row.filer_did}, ${row.price_micro},
        ${row.reconstruct_micro}, ${row.minutes}, ${row.tags}::text[], ${row.contains}::text[],
        ${row.does_not_contain}::text[], ${row.why_pay},
        ${row.provenance === null ? null : JSON.stringify(row.provenance)}::jsonb,
        ${row.origin}, ${row.is_demo}, ${row.hash}, ${row.body_key}, ${row.body_chars})`

  const insert = SqlSchema.single({
    Request: NewHandoff,
    Result: HandoffRowDecoded,
    execute: (row) => sql`${insertInto(row)} RETURNING ${preview}`
  })

  // Two desks starting at once may both try; the partial unique index lets exactly one in.
  const insertDemo = (row: NewHandoff) => sql`${insertInto(row)} ON CONFLICT (is_demo) WHERE is_demo DO NOTHING`

  const run = yield* FiberSet.makeRuntime<never>()
  // On PostgreSQL a batch that has not landed this long after its statement should have been cancelled is given
  // up (a silent server or link): its reads answer 503, and the next batch departs on another connection.
  const statementTimeoutMs = yield* statementTimeoutConfig
  const givenUpAfter = Option.isSome(yield* Effect.serviceOption(PgClient.PgClient)) && statementTimeoutMs > 0
    ? Option.some(Duration.millis(statementTimeoutMs + SILENT_GRACE_MS))
    : Option.none()
  const bounded = <A, E>(statement: Effect.Effect<A, E>): Effect.Effect<A, E | SqlError.SqlError> =>
    Option.match(givenUpAfter, {
      onNone: () => statement,
      onSome: (duration) =>
        statement.pipe(
          Effect.disconnect,
          Effect.timeoutFail({
            duration,
            onTimeout: () =>
              new SqlError.SqlError({
                message: `PgClient: no answer within ${Duration.format(duration)}`,
                cause: undefined
              })
          })
        )
    })
  /**
   * Reads by key that arrive while one statement is out are answered together by the next (src/Boarding.ts):
   * one round trip and one statement for the lot, each beginning after every read aboard, on a connection of its
   * own, so they see committed rows. A read inside a transaction goes alone on the transaction's connection: it
   * sees the transaction's writes, and holding one connection while waiting for another could starve the pool.
   */
  const together = <K, A, E>(send: (keys: ReadonlyArray<K>) => Effect.Effect<A, E>) => {
    const board = boarding({ run, send: (keys: ReadonlyArray<K>) => bounded(send(keys)) })
    return (key: K) =>
      Effect.flatMap(
        Effect.serviceOption(SqlClient.TransactionConnection),
        (transaction) => Option.isSome(transaction) ? send([key]) : board(key)
      )
  }
  const bySeq = <A extends { readonly seq: number }>(rows: ReadonlyArray<A>) =>
    new Map(rows.map((row) => [row.seq, row] as const))

  // Previews by id are the desk's most frequent statement; a sale reads its handoff's sealed fields.
  const findBySeqs = SqlSchema.findAll({
    Request: Schema.Array(Schema.Number),
    Result: HandoffRowDecoded,
    execute: (seqs) => sql`/* prepared */ SELECT ${preview} FROM handoffs WHERE seq = ANY(${seqs}::bigint[])`
  })
  const findBySeq = together((seqs: ReadonlyArray<number>) => Effect.map(findBySeqs(seqs), bySeq))

  const findSealeds = SqlSchema.findAll({
    Request: Schema.Array(Schema.Number),
    Result: SealedRow,
    execute: (seqs) =>
      sql`/* prepared */ SELECT seq, title, teaser, filer_did, price_micro, is_demo, hash FROM handoffs
        WHERE seq = ANY(${seqs}::bigint[])`
  })
  const findSealed = together((seqs: ReadonlyArray<number>) => Effect.map(findSealeds(seqs), bySeq))

  /**
   * For each (handoff, reader) asked, the handoff's sealed fields with its body when the reader holds a receipt for
   * it, else with a null body (the filer too: its id is public on every preview, and knowing an id is using it),
   * and whether the reader reads only by signing in: the checks and the read in one statement. Each row names the
   * reader it was read for.
   */
  const findSealedsFor = SqlSchema.findAll({
    Request: Schema.Struct({ seqs: Schema.Array(Schema.Number), readers: Schema.Array(Schema.String) }),
    Result: Schema.Struct({ ...SealedWithBody.fields, reader: Schema.String }),
    execute: ({ readers, seqs }) =>
      sql`/* prepared */ SELECT h.seq, h.title, h.teaser, h.filer_did, h.price_micro, h.is_demo, h.hash, q.reader,
          CASE WHEN EXISTS (SELECT 1 FROM receipts r
            WHERE r.handoff_seq = h.seq AND r.payer = q.reader) THEN h.body END AS body,
          coalesce((SELECT a.require_sign_in FROM agents a WHERE a.id = q.reader), false) AS reader_requires_sign_in
        FROM unnest(${seqs}::bigint[], ${readers}::text[]) AS q(seq, reader) JOIN handoffs h ON h.seq = q.seq`
  })
  // Keyed by handoff and reader together: a row read for one reader never answers another.
  const readKey = (seq: number, reader: string) => `${seq} ${reader}`
  const findSealedFor = together((asked: ReadonlyArray<{ readonly seq: number; readonly reader: string }>) =>
    Effect.map(
      findSealedsFor({ seqs: asked.map((_) => _.seq), readers: asked.map((_) => _.reader) }),
      (rows) => new Map(rows.map(({ reader, ...row }) => [readKey(row.seq, reader), row] as const))
    )
  )

  const tagCounts = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Schema.Struct({ tag: Schema.String, uses: DbInt }),
    execute: () =>
      // Kept per tag by triggers (migration 0011): the handoffs not the demo that name each tag, as a scan of every
      // handoff's tags counted them (1.6 s of PostgreSQL at 1,000,000 handoffs; this read, 5 ms).
      sql`SELECT tag, sum(packets) AS uses FROM tag_tally GROUP BY tag HAVING sum(packets) > 0`
  })

  const tagStats = SqlSchema.findAll({
    Request: Schema.Void,
    Result: TagStat,
    execute: () =>
      // Kept per tag by triggers (migration 0011): as the scan of every handoff's tags, without the scan.
      sql`SELECT tag, sum(packets) AS packets, sum(unlocks) AS unlocks,
          round(sum(reconstruct_micro) / sum(packets))::bigint AS avg_reconstruct_micro
        FROM tag_tally
        GROUP BY tag HAVING sum(packets) > 0
        ORDER BY unlocks DESC, packets DESC, tag LIMIT 50`
  })

  const findByBodyKey = SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ seq: DbInt }),
    execute: (key) => sql`SELECT seq FROM handoffs WHERE body_key = ${key}`
  })

  const findDemoSeq = SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ seq: DbInt }),
    execute: () => sql`SELECT seq FROM handoffs WHERE is_demo`
  })

  return {
    // A filing's insert can break no other unique constraint: the id is a sequence, only the demo row is is_demo.
    insert: (row: NewHandoff) =>
      insert(row).pipe(
        Effect.catchIf(
          (error) => error._tag === "SqlError" && isUniqueViolation(error) && row.body_key !== null,
          () => Effect.fail(new BodyTaken({ bodyKey: row.body_key! }))
        ),
        Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die, NoSuchElementException: Effect.die })
      ),
    findByBodyKey: (key: string) => Effect.orDie(Effect.map(findByBodyKey(key), Option.map((_) => _.seq))),
    insertDemo: (row: NewHandoff) => Effect.orDie(insertDemo(row)),
    findBySeq: (seq: number) => Effect.map(Effect.orDie(findBySeq(seq)), (rows) => Option.fromNullable(rows.get(seq))),
    findSealed: (seq: number) =>
      Effect.map(Effect.orDie(findSealed(seq)), (rows) => Option.fromNullable(rows.get(seq))),
    findSealedFor: (seq: number, reader: string) =>
      Effect.map(
        Effect.orDie(findSealedFor({ seq, reader })),
        (rows) => Option.fromNullable(rows.get(readKey(seq, reader)))
      ),
    search: (query: CatalogQuery) => Effect.orDie(search(sql, query)),
    tagCounts: Effect.orDie(tagCounts(undefined)),
    tagStats: Effect.orDie(tagStats(undefined)),
    demoSeq: Effect.orDie(Effect.map(findDemoSeq(undefined), Option.map((_) => _.seq)))
  } as const
})

export class HandoffRepo extends Context.Tag("HandoffRepo")<HandoffRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.scoped(HandoffRepo, make)
}
