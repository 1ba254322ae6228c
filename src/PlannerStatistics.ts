import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Cause, Duration, Effect, Layer, Option, Schema } from "effect"

/**
 * A table is analyzed again once this share of its rows (plus 50) changed since its statistics were taken:
 * twice autovacuum's default, so where autovacuum runs it gets there first and this finds nothing to do.
 */
const CHANGED_SHARE = 0.2

/**
 * Tables smaller than this are left alone: they are read whole whatever the plan. The kept counters' delta tables
 * (books_tally, tag_tally) stay that small by folding, yet change by far more than their share every minute of
 * sales, and were analyzed, and logged, once a minute for nothing.
 */
const ROWS_AT_LEAST = 1_000

/** How often the desk looks for tables whose statistics fell behind. */
const EVERY = Duration.minutes(1)

/**
 * The statistics target of the embedded store's ANALYZE: a sample of 3,000 rows instead of 30,000. PGlite's
 * memory is WebAssembly's, which never shrinks: the full sample of the bench's 17,000 handoffs left the process
 * 32 MB larger (the embedded bench's peak RSS 269 -> 292-297 MB), this one 1-3 MB, in 178 ms instead of 432.
 */
const EMBEDDED_TARGET = 10

const Stale = Schema.Array(Schema.Struct({ relname: Schema.String }))

/**
 * ANALYZEs the desk's tables of 1,000 rows or more whose planner statistics fell behind their changes. Without
 * statistics PostgreSQL plans with fixed guesses, and they went wrong at scale: with a million receipts it read a
 * whole partial index of sales to count one buyer's hundred (91 ms, 638 ms through another index, against 0.8 ms with
 * statistics). Autovacuum keeps statistics on a default PostgreSQL, but it never runs inside embedded PGlite,
 * and servers run with it off. One desk at a time (a transaction-scoped advisory lock; the others skip the
 * pass), and without the statement timeout: ANALYZE of a million handoffs took 4.2 s. Answers the tables analyzed.
 */
export const analyzeStale: Effect.Effect<ReadonlyArray<string>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const [lock] = yield* sql<{ readonly taken: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext('desk_analyze'))
      AS taken`
    if (lock?.taken !== true) return []
    const changedShare = sql.literal(String(CHANGED_SHARE))
    const stale = yield* Effect.flatMap(
      sql`SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()
        AND n_live_tup >= ${sql.literal(String(ROWS_AT_LEAST))}
        AND n_mod_since_analyze > 50 + ${changedShare} * n_live_tup ORDER BY relname`,
      Schema.decodeUnknown(Stale)
    )
    if (stale.length === 0) return []
    yield* sql`SET LOCAL statement_timeout = 0`
    if (Option.isNone(yield* Effect.serviceOption(PgClient.PgClient))) {
      yield* sql`SET LOCAL default_statistics_target = ${sql.literal(String(EMBEDDED_TARGET))}`
    }
    for (const { relname } of stale) yield* sql`ANALYZE ${sql(relname)}`
    return stale.map((_) => _.relname)
  }))
}).pipe(Effect.orDie)

/** Keeps the planner's statistics for as long as the desk runs, looking once a minute. */
export const PlannerStatisticsLive = Layer.scopedDiscard(
  Effect.sleep(EVERY).pipe(
    Effect.zipRight(analyzeStale),
    Effect.tap((tables) => tables.length === 0 ? Effect.void : Effect.logInfo(`analyzed ${tables.join(", ")}`)),
    Effect.catchAllCause((cause) => Effect.logError("refreshing the planner's statistics failed", Cause.pretty(cause))),
    Effect.forever,
    Effect.forkScoped
  )
)
