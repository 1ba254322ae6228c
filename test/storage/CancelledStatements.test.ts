import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, Fiber, Layer, Redacted } from "effect"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/** The desk's PostgreSQL layer on a throw-away database, with a pool of `connections`. */
const desk = (connections: number) =>
  Effect.flatMap(freshDatabaseUrl(DATABASE_URL!), (url) =>
    Layer.build(
      Postgres.layer(Redacted.make(url)).pipe(
        Layer.provide(
          Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DESK_DB_POOL", String(connections)]])))
        )
      )
    ))

/**
 * Rounds of statements interrupted while they run (as a request's are when its client hangs up), each followed at
 * once by statements of other requests on the same small pool; how many of those others failed, and why.
 */
const interruptedThenOthers = (rounds: number, inTransactions = false) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = <A, E, R>(statement: Effect.Effect<A, E, R>) =>
      inTransactions ? sql.withTransaction(statement) : statement
    const failures: Array<string> = []
    let answered = 0
    for (let round = 0; round < rounds; round++) {
      const interrupted = yield* Effect.forEach(
        Array.from({ length: 8 }),
        () =>
          Effect.fork(run(sql`SELECT count(*) FROM generate_series(1, ${20_000 + Math.floor(Math.random() * 40_000)})`))
      )
      yield* Effect.sleep(Duration.micros(BigInt(Math.floor(Math.random() * 3_000))))
      yield* Effect.forEach(interrupted, (fiber) => Effect.fork(Fiber.interrupt(fiber)))
      const others = yield* Effect.forEach(
        Array.from({ length: 8 }),
        () => Effect.fork(Effect.either(run(sql`SELECT count(*) FROM generate_series(1, 1000)`)))
      )
      for (const other of others) {
        const result = yield* Fiber.join(other)
        if (Either.isRight(result)) answered++
        else failures.push(String(result.left.cause instanceof Error ? result.left.cause.message : result.left.message))
      }
    }
    return { answered, failures }
  })

describe.skipIf(process.env.DESK_TEST_STORE !== "postgres" || DATABASE_URL === undefined)(
  "statements interrupted on PostgreSQL",
  () => {
    it.live(
      "never cancel another request's statement: a connection a cancel was sent to is not pooled again",
      () =>
        Effect.gen(function*() {
          const services = yield* desk(4)
          // Before the change 24 of 2,400 such statements failed ("canceling statement due to user request").
          const { answered, failures } = yield* Effect.provide(interruptedThenOthers(200), services)
          expect(failures).toEqual([])
          expect(answered).toBe(1_600)
          // The pool still answers: the connections it closed were replaced.
          const sql = yield* Effect.provide(SqlClient.SqlClient, services)
          expect(yield* sql`SELECT 1 AS one`).toEqual([{ one: 1 }])
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "its connections for cancels may break while idle (a server restart) without taking the desk down",
      () =>
        Effect.gen(function*() {
          const services = yield* desk(4)
          const sql = yield* Effect.provide(SqlClient.SqlClient, services)
          yield* Effect.provide(interruptedThenOthers(5), services)
          // The connections that ran the cancels, idle now: ended by the server, as a restart would end them.
          const ended = yield* sql`SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'idle' AND query LIKE 'SELECT pg_cancel_backend%'`
          expect(ended.length).toBeGreaterThan(0)
          // An "error" event nobody listened to would end this process (vitest reports an unhandled error).
          yield* Effect.sleep("300 millis")
          const { answered, failures } = yield* Effect.provide(interruptedThenOthers(20), services)
          expect(failures).toEqual([])
          expect(answered).toBe(160)
        }).pipe(Effect.scoped),
      120_000
    )

    it.live(
      "nor another request's transaction, when the statements interrupted ran in transactions",
      () =>
        Effect.gen(function*() {
          const services = yield* desk(4)
          const { answered, failures } = yield* Effect.provide(interruptedThenOthers(100, true), services)
          expect(failures).toEqual([])
          expect(answered).toBe(800)
        }).pipe(Effect.scoped),
      120_000
    )
  }
)
