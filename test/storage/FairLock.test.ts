import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { type FairLock, makeFairLock } from "../../adapters/storage/FairLock.ts"
import * as Pglite from "../../adapters/storage/Pglite.ts"

/** The lock held in a scope of its own: closing the scope gives it back. */
const holdIn = (lock: FairLock) =>
  Effect.flatMap(Scope.make(), (scope) => Effect.as(Scope.extend(lock.hold, scope), scope))

/** Holds the lock in turn with the others, noting `name` while it holds it. */
const use = (lock: FairLock, order: Array<string | number>, name: string | number) =>
  Effect.scoped(Effect.zipRight(lock.hold, Effect.sync(() => order.push(name))))

describe("FairLock", () => {
  it.effect("hands the lock to waiters in the order they asked", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      const order: Array<string | number> = []
      const held = yield* holdIn(lock)
      const waiters = yield* Effect.forEach([1, 2, 3, 4, 5], (n) => Effect.fork(use(lock, order, n)))
      yield* Effect.yieldNow()
      expect(lock.waiting()).toBe(5)
      yield* Scope.close(held, Exit.void)
      yield* Fiber.joinAll(waiters)
      expect(order).toEqual([1, 2, 3, 4, 5])
      expect(lock.waiting()).toBe(0)
      // Free again: the next hold does not wait.
      yield* holdIn(lock)
    }))

  it.effect("a release hands the lock over: a fiber arriving just after it cannot take it first", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      const order: Array<string | number> = []
      const held = yield* holdIn(lock)
      const waiter = yield* Effect.fork(use(lock, order, "waiter"))
      yield* Effect.yieldNow()
      // Effect's Semaphore would let this fiber in: the woken waiter has not run yet when it asks.
      yield* Scope.close(held, Exit.void)
      const late = yield* Effect.fork(use(lock, order, "late"))
      yield* Fiber.joinAll([waiter, late])
      expect(order).toEqual(["waiter", "late"])
    }))

  it.effect("an interrupted waiter leaves the queue and the lock goes to the next", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      const held = yield* holdIn(lock)
      const first = yield* Effect.fork(Effect.scoped(lock.hold))
      const second = yield* Effect.fork(Effect.as(Effect.scoped(lock.hold), "second"))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      expect(lock.waiting()).toBe(1)
      yield* Scope.close(held, Exit.void)
      expect(yield* Fiber.join(second)).toBe("second")
    }))

  it.effect("a waiter interrupted as the lock is handed to it passes it on", () =>
    Effect.gen(function*() {
      const lock = makeFairLock()
      const order: Array<string | number> = []
      // Each round: the lock is released and, before the woken waiter runs, that waiter (or one behind it) is
      // interrupted. The lock given to a fiber that is interrupted before it runs again must reach the next one.
      for (let round = 0; round < 40; round++) {
        const held = yield* holdIn(lock)
        const waiters = yield* Effect.forEach([0, 1, 2], (n) => Effect.fork(use(lock, order, `${round}.${n}`)))
        yield* Effect.yieldNow()
        const interrupted = waiters[round % 3]!
        yield* Scope.close(held, Exit.void)
        yield* Fiber.interruptFork(interrupted)
        yield* Fiber.await(interrupted)
        yield* Fiber.joinAll(waiters.filter((_) => _ !== interrupted))
        expect(lock.waiting()).toBe(0)
      }
      // Every round's other two waiters held it; the lock is free at the end.
      expect(order.length).toBeGreaterThanOrEqual(80)
      yield* holdIn(lock)
    }), 10_000)
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
