import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { analyzeStale } from "../../src/PlannerStatistics.ts"
import { migrated } from "../../src/Sql.ts"
import { backends } from "../support/Storage.ts"

const Row = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly reltuples: number; readonly changed: number | null; readonly analyzed: boolean }>`
        SELECT c.reltuples::float8 AS reltuples, s.n_mod_since_analyze::int AS changed,
          s.last_analyze IS NOT NULL AS analyzed
        FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = ${table}`,
      ([row]) => row!
    )).pipe(Effect.orDie)

/** A pause on the wall clock: `it.effect` runs on the test clock, and the server's counters do not. */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 250)))

/** Waits until the server's counters show `rows` changes to `table` (PostgreSQL reports them within ~10 s). */
const changesSeen = (table: string, rows: number) =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 120; tries++) {
      if (((yield* Row(table)).changed ?? 0) >= rows) return
      yield* pause
    }
    return yield* Effect.dieMessage(`the counters never showed ${rows} changes to ${table}`)
  })

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`planner statistics over ${backend.name}`, () => {
    it.layer(migrated(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("a table changed past its share is analyzed once; unchanged, it is left alone", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE grown (n int PRIMARY KEY, word text NOT NULL)`.pipe(Effect.orDie)
          yield* sql`INSERT INTO grown SELECT g, 'w' || (g % 7) FROM generate_series(1, 2000) g`.pipe(Effect.orDie)
          // A table under 1,000 rows is read whole whatever the plan: left alone however much of it changed.
          yield* sql`CREATE TABLE small (n int)`.pipe(Effect.orDie)
          yield* sql`INSERT INTO small SELECT generate_series(1, 900)`.pipe(Effect.orDie)
          yield* changesSeen("grown", 2000)
          yield* changesSeen("small", 900)
          expect(yield* Row("grown")).toMatchObject({ reltuples: -1, analyzed: false })

          const first = yield* analyzeStale
          expect(first).toContain("grown")
          expect(first).not.toContain("small")
          expect(yield* Row("grown")).toMatchObject({ reltuples: 2000, analyzed: true })
          expect(yield* analyzeStale).not.toContain("grown")

          // 300 more rows are 13 % of 2,300: under the share, so no new statistics yet; 400 more pass it.
          yield* sql`INSERT INTO grown SELECT g, 'w' FROM generate_series(2001, 2300) g`.pipe(Effect.orDie)
          yield* changesSeen("grown", 300)
          expect(yield* analyzeStale).not.toContain("grown")
          expect((yield* Row("grown")).reltuples).toBe(2000)
          yield* sql`INSERT INTO grown SELECT g, 'w' FROM generate_series(2301, 2700) g`.pipe(Effect.orDie)
          yield* changesSeen("grown", 700)
          expect(yield* analyzeStale).toContain("grown")
          expect((yield* Row("grown")).reltuples).toBe(2700)
        }))

      it.effect("handoffs are analyzed for the columns statements read, not the body and prose; embedded, from a smaller sample", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, origin,
              hash, body_chars, tags)
            SELECT 'Title ' || g, 'Teaser ' || g, repeat('body ', 100) || g, 'filer', 'did:desk:' || md5(g::text),
              1000 * g, 10000000 + g, 'seed', md5('h' || g), 500, ARRAY['t' || (g % 5)]
            FROM generate_series(1, 1200) g`.pipe(Effect.orDie)
          yield* changesSeen("handoffs", 1200)
          expect(yield* analyzeStale).toContain("handoffs")
          const columns = yield* sql<{ readonly attname: string }>`SELECT attname FROM pg_stats
            WHERE tablename = 'handoffs' ORDER BY attname`.pipe(Effect.orDie)
          const analyzed = columns.map((_) => _.attname)
          expect(analyzed).toEqual(expect.arrayContaining(["filed_at", "filer_did", "price_micro", "search", "tags"]))
          for (const prose of ["body", "title", "teaser", "why_pay", "contains", "does_not_contain", "provenance"]) {
            expect(analyzed).not.toContain(prose)
          }
          // The embedded store samples a tenth as many rows, and keeps a histogram of 10 buckets instead of 100.
          const [prices] = yield* sql<{ readonly bounds: number }>`SELECT
              array_length(histogram_bounds::text::bigint[], 1) AS bounds
            FROM pg_stats WHERE tablename = 'handoffs' AND attname = 'price_micro'`.pipe(Effect.orDie)
          expect(prices?.bounds).toBe(backend.name === "pglite" ? 11 : 101)
        }))

      it.effect.skipIf(backend.name === "pglite")(
        "a desk that finds another analyzing skips the pass (PGlite has one connection, so no other desk)",
        () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            yield* sql`CREATE TABLE held (n int)`.pipe(Effect.orDie)
            yield* sql`INSERT INTO held SELECT generate_series(1, 1500)`.pipe(Effect.orDie)
            yield* changesSeen("held", 1500)
            // Another desk's pass, as a connection of its own holding the lock.
            const skipped = yield* Effect.scoped(Effect.gen(function*() {
              const other = yield* sql.reserve
              yield* other.executeRaw("SELECT pg_advisory_lock(hashtext('desk_analyze'))", [])
              yield* Effect.addFinalizer(() =>
                Effect.ignore(other.executeRaw("SELECT pg_advisory_unlock(hashtext('desk_analyze'))", []))
              )
              return yield* analyzeStale
            })).pipe(Effect.orDie)
            expect(skipped).toEqual([])
            expect((yield* Row("held")).analyzed).toBe(false)
            expect(yield* analyzeStale).toContain("held")
          })
      )
    })
  })
}
