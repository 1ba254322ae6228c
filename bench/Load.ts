import { SqlClient, type SqlError } from "@effect/sql"
import { Console, Effect, Fiber, Schema } from "effect"
import { handoffAt, type SyntheticHandoff } from "./SyntheticCatalog.ts"

const BATCH = 2_000
const IN_FLIGHT = 2

/** Written on the table once a load completes, so an interrupted load is never mistaken for a catalog. */
// v2: long-tail names in titles. A catalog from another version of the generator is rebuilt, not reused.
export const markerOf = (seed: number, handoffs: number) =>
  `handoff-desk bench catalog v2 seed=${seed} handoffs=${handoffs}`

const Loaded = Schema.Struct({
  marker: Schema.NullOr(Schema.String),
  filings: Schema.NumberFromString,
  written: Schema.Boolean
})
const IndexDef = Schema.Struct({ indexname: Schema.String, indexdef: Schema.String })

/**
 * The catalog's marker, and whether a run has written to it since it was loaded: the bench's filings (filed now,
 * so first in every newest-first listing) and identities (every receipt names one) would change what later runs
 * measure. The catalog's filers are agents too (migration 0023); any other agent was written by a run.
 */
export const loadedCatalog = (handoffs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT obj_description('handoffs'::regclass, 'pg_class') AS marker,
      (SELECT count(*) FROM handoffs WHERE NOT is_demo) AS filings,
      EXISTS (SELECT 1 FROM agents a WHERE NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.filer_did = a.id)) AS written`
    const loaded = Schema.decodeUnknownSync(Loaded)(rows[0])
    return { marker: loaded.marker, untouched: loaded.filings === handoffs && !loaded.written }
  })

const batchOf = (seed: number, from: number, to: number) => {
  const rows: Array<SyntheticHandoff> = []
  for (let i = from; i < to; i++) rows.push(handoffAt(seed, i))
  return rows
}

// One array parameter per column keeps a batch to one short statement on both PostgreSQL and PGlite.
const insertBatch = (rows: ReadonlyArray<SyntheticHandoff>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const column = <A>(f: (row: SyntheticHandoff) => A) => rows.map(f)
    return sql`INSERT INTO handoffs (seq, title, teaser, body, filer, filer_did, price_micro, reconstruct_micro,
        minutes, tags, contains, does_not_contain, why_pay, provenance, origin, hash, body_chars, filed_at)
      SELECT seq, title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, minutes,
        string_to_array(tags, '|'), string_to_array(contains, '|'), string_to_array(does_not_contain, '|'),
        why_pay, provenance::jsonb, 'seed', hash, body_chars, filed_at::timestamptz
      FROM unnest(${column((_) => _.seq)}::bigint[], ${column((_) => _.title)}::text[],
        ${column((_) => _.teaser)}::text[], ${column((_) => _.body)}::text[], ${column((_) => _.filer)}::text[],
        ${column((_) => _.filerDid)}::text[], ${column((_) => _.priceMicro)}::bigint[],
        ${column((_) => _.reconstructMicro)}::bigint[], ${column((_) => _.minutes)}::float8[],
        ${column((_) => _.tags.join("|"))}::text[], ${column((_) => _.contains.join("|"))}::text[],
        ${column((_) => _.doesNotContain.join("|"))}::text[], ${column((_) => _.whyPay)}::text[],
        ${column((_) => _.provenance)}::text[], ${column((_) => _.hash)}::text[],
        ${column((_) => _.bodyChars)}::int[], ${column((_) => _.filedAt)}::text[])
        AS t(seq, title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, minutes, tags, contains,
          does_not_contain, why_pay, provenance, hash, body_chars, filed_at)`
  })

/**
 * Fills an empty, migrated `handoffs` table with the synthetic catalog. Secondary indexes (and those of
 * `tag_listing`, which its triggers fill) are dropped for the load and rebuilt from their own definitions
 * afterwards (much faster than maintaining a GIN index row by row).
 */
export const loadCatalog = (seed: number, handoffs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const started = Date.now()
    const indexes = Schema.decodeUnknownSync(Schema.Array(IndexDef))(
      yield* sql`SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename IN ('handoffs', 'tag_listing')
          AND indexname <> 'handoffs_pkey'`
    )
    for (const index of indexes) yield* sql`DROP INDEX ${sql(index.indexname)}`
    // Two batches in flight keep both of PostgreSQL's cores busy while the next one is generated here.
    const inFlight: Array<Fiber.Fiber<void, SqlError.SqlError>> = []
    let loaded = 0
    let reported = Date.now()
    for (let from = 0; from < handoffs; from += BATCH) {
      const rows = batchOf(seed, from, Math.min(from + BATCH, handoffs))
      if (inFlight.length === IN_FLIGHT) yield* Fiber.join(inFlight.shift()!)
      inFlight.push(yield* Effect.fork(Effect.asVoid(insertBatch(rows))))
      loaded += rows.length
      if (Date.now() - reported > 10_000) {
        reported = Date.now()
        yield* Console.log(`  loaded ${loaded.toLocaleString("en")} of ${handoffs.toLocaleString("en")} handoffs`)
      }
    }
    for (const fiber of inFlight) yield* Fiber.join(fiber)
    yield* sql`SELECT setval('handoff_seq', ${handoffs})`
    const inserted = Date.now()
    for (const index of indexes) {
      yield* sql.withTransaction(
        Effect.zipRight(sql`SET LOCAL maintenance_work_mem = '256MB'`, sql.unsafe(index.indexdef))
      )
    }
    const indexed = Date.now()
    yield* sql`VACUUM (ANALYZE) handoffs, tag_listing`
    yield* sql.unsafe(`COMMENT ON TABLE handoffs IS '${markerOf(seed, handoffs)}'`)
    return {
      insertSeconds: (inserted - started) / 1000,
      indexSeconds: (indexed - inserted) / 1000,
      totalSeconds: (Date.now() - started) / 1000
    }
  })
