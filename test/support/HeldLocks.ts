import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Fiber } from "effect"

/** A pause on real timers: a test's clock stands still. */
const pause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 20)))

/**
 * Runs `hold` in a transaction on one PostgreSQL connection, then starts `waiting` (each on a connection of its
 * own), and ends the transaction once `waiters` statements of this database whose text is LIKE `query` wait for a
 * lock (at most five seconds, then on regardless: a run where nothing waited has nothing ordering them, and the
 * test's own checks tell). The waits are watched from a connection of their own, as inside a transaction
 * pg_stat_activity keeps its first reading. Answers what `waiting` answered, in order. PostgreSQL only: PGlite has
 * one connection, where `waiting` would wait for the transaction's end rather than its locks, and the transaction
 * for them forever.
 */
export const whileHeld = <A, E, R>(
  hold: Effect.Effect<unknown, unknown, R>,
  waiting: ReadonlyArray<Effect.Effect<A, E, R>>,
  options: { readonly waiters: number; readonly query?: string }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const waiters = Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${options.query ?? "%"}`,
      ([row]) => row!.n
    )
    const go = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fibers = yield* Effect.forEach(waiting, (effect) => Effect.fork(Effect.zipRight(Deferred.await(go), effect)))
    yield* Effect.fork(Effect.gen(function*() {
      yield* Deferred.await(go)
      for (let tries = 0; tries < 250 && (yield* waiters) < options.waiters; tries++) yield* pause
      yield* Deferred.succeed(release, undefined)
    }))
    yield* sql.withTransaction(
      Effect.zipRight(hold, Effect.zipRight(Deferred.succeed(go, undefined), Deferred.await(release)))
    )
    return yield* Fiber.join(Fiber.all(fibers))
  })
