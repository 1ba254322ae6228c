import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { makeFairLock } from "../../adapters/storage/FairLock.ts"
import * as Pglite from "../../adapters/storage/Pglite.ts"

describe("FairLock", () => {
  it.effect("hands the lock to waiters in the order they asked", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      const order: Array<number> = []
      yield* lock.take
      const waiters = yield* Effect.forEach([1, 2, 3, 4, 5], (n) =>
        Effect.fork(Effect.zipRight(lock.take, Effect.zipRight(Effect.sync(() => order.push(n)), lock.release))))
      yield* Effect.yieldNow()
      expect(lock.waiting()).toBe(5)
      yield* lock.release
      yield* Fiber.joinAll(waiters)
      expect(order).toEqual([1, 2, 3, 4, 5])
      expect(lock.waiting()).toBe(0)
      // Free again: the next take does not wait.
      yield* lock.take
    }))

  it.effect("a release hands the lock over: a fiber arriving just after it cannot take it first", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      const order: Array<string> = []
      const use = (name: string) =>
        Effect.zipRight(lock.take, Effect.zipRight(Effect.sync(() => order.push(name)), lock.release))
      yield* lock.take
      const waiter = yield* Effect.fork(use("waiter"))
      yield* Effect.yieldNow()
      // Effect's Semaphore would let this fiber in: the woken waiter has not run yet when it asks.
      yield* lock.release
      const late = yield* Effect.fork(use("late"))
      yield* Fiber.joinAll([waiter, late])
      expect(order).toEqual(["waiter", "late"])
    }))

  it.effect("an interrupted waiter leaves the queue and the lock goes to the next", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      yield* lock.take
      const first = yield* Effect.fork(lock.take)
      const second = yield* Effect.fork(Effect.as(lock.take, "second"))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      expect(lock.waiting()).toBe(1)
      yield* lock.release
      expect(yield* Fiber.join(second)).toBe("second")
    }))
})

describe("Pglite under contention", () => {
  it.scoped("runs statements in the order they were issued, however many wait", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE arrivals (n int NOT NULL, at serial)`
      yield* Effect.forEach(
        Array.from({ length: 64 }, (_, n) => n),
        (n) => sql`INSERT INTO arrivals (n) VALUES (${n})`,
        { concurrency: "unbounded" }
      )
      const rows = yield* sql<{ n: number }>`SELECT n FROM arrivals ORDER BY at`
      expect(rows.map((_) => _.n)).toEqual(Array.from({ length: 64 }, (_, n) => n))
    }).pipe(Effect.provide(Pglite.layer({}))))
})
