import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Retitles a handoff where no trigger sees it (replica role), so no desk is told: a read that still returns the
 * old title came from a preview cache. Tests use it to know when a cache serves.
 */
export const unannounced = (seq: number, title: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.zipRight(
        sql`SET LOCAL session_replication_role = replica`,
        sql`UPDATE handoffs SET title = ${title} WHERE seq = ${seq}`
      )
    )).pipe(Effect.orDie)

/**
 * Whether reads come from a cache, tried up to 100 times: read, retitle unannounced through `retitle` (which
 * runs `unannounced` wherever the test keeps its writing desk), read again; the old title again means a cache.
 */
export const untilCached = <E, R, E2, R2>(
  read: Effect.Effect<{ readonly title: string }, E, R>,
  retitle: (title: string) => Effect.Effect<unknown, E2, R2>
) =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 100; tries++) {
      const seen = (yield* read).title
      yield* retitle(`Changed behind the caches ${tries}`)
      if ((yield* read).title === seen) return true
      yield* Effect.sleep("50 millis")
    }
    return false
  })
