import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Layer } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"

/** On the real clock (it.effect's TestClock would never let the timeout pass). */
const within = <A, E, R>(self: Effect.Effect<A, E, R>, seconds: number) =>
  self.pipe(Effect.timeout(Duration.seconds(seconds)), Effect.provide(Layer.setClock(Clock.make())))

describe("the embedded store after interrupted statements", () => {
  it.layer(Pglite.layer({}), { timeout: 60_000 })((it) => {
    it.effect("statements interrupted while they wait their turn leave it serving the next ones", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Statements wait their turn for the one PGlite session; when one fails, Effect.all interrupts the others,
        // some as the session is handed to them. Each round must leave the session to whoever asks next.
        for (let round = 0; round < 30; round++) {
          const statement = (i: number) => sql`SELECT ${i}::int AS n`
          const waiting = Array.from(
            { length: 11 },
            (_, i) => Effect.zipRight(statement(i), Effect.zipRight(statement(i), statement(i)))
          )
          const failing = Effect.zipRight(Effect.yieldNow(), Effect.orDie(sql`SELEC 1`))
          const exit = yield* Effect.exit(Effect.all([...waiting, failing], { concurrency: 12 }))
          expect(exit._tag).toBe("Failure")
          const after = yield* Effect.exit(within(sql<{ one: number }>`SELECT 1 AS one`, 5))
          expect(after._tag, `round ${round}`).toBe("Success")
        }
      }))
  })
})
