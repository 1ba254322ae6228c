import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, TestClock } from "effect"
import { DEEP_FROM, DEEP_WAIT } from "../../src/Catalog/DeepPages.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const timed = (path: string) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const started = Date.now()
      const response = await desk.request(path)
      const json = await readJson(response)
      return {
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        json,
        ms: Date.now() - started
      }
    }))

/** A real pause: the test clock would not move. */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

/** The first page DEEP_FROM results in, and the page before it. */
const DEEP = `limit=100&page=${DEEP_FROM / 100 + 1}`
const SHALLOW = `limit=100&page=${DEEP_FROM / 100}`

for (const backend of backends) {
  describe.skipIf(!backend.available)(`deep pages over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      // PGlite has one connection: the transaction holding the lock below would hold it, and every read with it.
      it.effect.skipIf(backend.name !== "postgres")(
        "a deep page held up in the database keeps other deep pages out (503), never a shallow one",
        () =>
          Effect.gen(function*() {
            const desk = yield* TestDesk
            const sql = yield* SqlClient.SqlClient
            const agent = newAgentId()
            const filed = yield* Effect.promise(() => desk.request("/api/handoffs", { json: filing(agent), agent }))
            expect(filed.status).toBe(201)
            // Every listing reads handoff_sales (each preview's sale count, migration 0027): a lock on it holds a page
            // in the database, a shallow one too.
            const locked = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            const holder = yield* Effect.fork(sql.withTransaction(
              Effect.zipRight(
                sql`LOCK TABLE handoff_sales IN ACCESS EXCLUSIVE MODE`,
                Effect.zipRight(Deferred.succeed(locked, undefined), Deferred.await(release))
              )
            ))
            yield* Deferred.await(locked)
            const first = yield* Effect.fork(timed(`/api/discover?sort=popular&${DEEP}`))
            const waitingOnLock = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`
            while ((yield* waitingOnLock)[0]!.n === 0) yield* pause

            // A shallow page meanwhile waits for the lock, never for the turn: the clock moved on below would have the
            // turn refuse it as it refuses the second deep page.
            const shallow = yield* Effect.fork(timed(`/api/discover?sort=recent&${SHALLOW}`))
            // (At most five seconds: a shallow page waiting for the turn instead would never wait for the lock.)
            for (let tries = 0; tries < 250 && (yield* waitingOnLock)[0]!.n < 2; tries++) yield* pause
            // The desk's clock is the test's: it is moved on until the second deep page gives up waiting.
            const second = yield* Effect.fork(timed(`/api/discover?sort=recent&${DEEP}`))
            let moved = 0
            while (second.unsafePoll() === null) {
              yield* TestClock.adjust(Duration.millis(100))
              moved += 100
              yield* pause
            }
            const refused = yield* Fiber.join(second)
            expect([refused.status, refused.json.error, refused.retryAfter]).toEqual([503, "unavailable", "5"])
            expect(refused.json.message).toContain("one at a time")
            expect(moved).toBeGreaterThanOrEqual(Duration.toMillis(DEEP_WAIT))

            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(holder)
            const answered = yield* Fiber.join(first)
            expect([answered.status, answered.json.total]).toEqual([200, 1])
            expect((yield* Fiber.join(shallow)).status).toBe(200)
            // The turn given back, and rested as long as the first page took on the desk's clock, the next deep page
            // is read at once.
            yield* TestClock.adjust(Duration.millis(moved))
            expect((yield* timed(`/api/discover?sort=recent&${DEEP}`)).status).toBe(200)
          })
      )
    })
  })
}
