import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, TestClock } from "effect"
import { DEEP_FROM, DEEP_WAIT, DEEP_WAITING, makeDeepPages } from "../../src/Catalog/DeepPages.ts"
import { toCatalogQuery } from "../../src/Domain/Discover.ts"

/** The first page that starts DEEP_FROM results in, and the one before it. */
const deep = toCatalogQuery({ limit: 100, page: DEEP_FROM / 100 + 1 })
const shallow = toCatalogQuery({ limit: 100, page: DEEP_FROM / 100 })

/** A read held open until `release`, noting when it starts. */
const held = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const read = Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
  return { started, release, read }
})

type Gate = Effect.Effect.Success<ReturnType<typeof makeDeepPages>>

/** A deep page that has taken the gate's turn and holds it until `end`, which waits for the page to finish. */
const holdingTurn = (gate: Gate) =>
  Effect.gen(function*() {
    const { read, release, started } = yield* held
    const reading = yield* Effect.fork(gate(deep, read))
    yield* Deferred.await(started)
    return { reading, end: Effect.zipRight(Deferred.succeed(release, undefined), Fiber.join(reading)) }
  })

describe("deep pages, one at a time", () => {
  it.effect("a deep page waits for the one being read and the rest after it; shallow pages never wait", () =>
    Effect.gen(function*() {
      const gate = yield* makeDeepPages()
      const first = yield* holdingTurn(gate)
      const second = yield* held
      const waiting = yield* Effect.fork(gate(deep, second.read))
      // Shallow pages go straight through while the deep one is read.
      expect(yield* gate(shallow, Effect.succeed("shallow"))).toBe("shallow")
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* Deferred.isDone(second.started)).toBe(false)
      yield* first.end
      // The first read took a second: the turn rests a second before the waiting page gets it.
      yield* TestClock.adjust(Duration.millis(900))
      expect(yield* Deferred.isDone(second.started)).toBe(false)
      yield* TestClock.adjust(Duration.millis(150))
      yield* Deferred.await(second.started)
      yield* Deferred.succeed(second.release, undefined)
      yield* Fiber.join(waiting)
    }))

  it.effect("a deep page by one tag alone, newest or savings first, never waits: the tag's own index reads it", () =>
    Effect.gen(function*() {
      const gate = yield* makeDeepPages()
      const first = yield* holdingTurn(gate)
      const page = { limit: 100, page: DEEP_FROM / 100 + 1, tag: "redis" }
      for (const sort of [undefined, "recent", "relevance", "savings"] as const) {
        expect(yield* gate(toCatalogQuery({ ...page, sort }), Effect.succeed(sort))).toBe(sort)
      }
      // Another sort, or a filter beside the tag, is read from the catalog's order: it waits its turn.
      const others = [
        toCatalogQuery({ ...page, sort: "price" }),
        toCatalogQuery({ ...page, q: "cache" }),
        { ...toCatalogQuery(page), vendor: "anthropic" }
      ]
      for (const other of others) {
        const waiting = yield* Effect.fork(gate(other, Effect.succeed("read")))
        yield* TestClock.adjust(Duration.millis(100))
        expect(waiting.unsafePoll(), JSON.stringify(other)).toBeNull()
        yield* Fiber.interrupt(waiting)
      }
      yield* first.end
    }))

  it.effect("DEEP_WAITING deep pages wait for the turn, one after another; one more is refused at once", () =>
    Effect.gen(function*() {
      const gate = yield* makeDeepPages()
      const first = yield* holdingTurn(gate)
      const waiters = yield* Effect.forEach(
        Array.from({ length: DEEP_WAITING }, (_, i) => i),
        (i) => Effect.fork(gate(deep, Effect.succeed(i)))
      )
      yield* TestClock.adjust(Duration.millis(100))
      expect(waiters.map((_) => _.unsafePoll())).toEqual(waiters.map(() => null))
      expect((yield* Effect.flip(gate(deep, Effect.succeed(-1))))._tag).toBe("Unavailable")
      // A waiter gone (its client left), another deep page may wait in its place.
      yield* Fiber.interrupt(waiters[0]!)
      const next = yield* Effect.fork(gate(deep, Effect.succeed(DEEP_WAITING)))
      yield* TestClock.adjust(Duration.millis(100))
      expect(next.unsafePoll()).toBe(null)
      yield* first.end
      // The waiting reads take no time on the test clock, so each one's rest is nil: all get in.
      yield* TestClock.adjust(Duration.millis(300))
      expect(yield* Effect.forEach([...waiters.slice(1), next], Fiber.join)).toEqual(
        Array.from({ length: DEEP_WAITING }, (_, i) => i + 1)
      )
    }))

  it.effect("the rest after a long read is at most five seconds", () =>
    Effect.gen(function*() {
      const gate = yield* makeDeepPages(Duration.zero)
      const first = yield* holdingTurn(gate)
      yield* TestClock.adjust(Duration.seconds(20))
      yield* first.end
      yield* TestClock.adjust(Duration.millis(4_900))
      expect((yield* Effect.flip(gate(deep, Effect.succeed("resting"))))._tag).toBe("Unavailable")
      yield* TestClock.adjust(Duration.millis(100))
      expect(yield* gate(deep, Effect.succeed("rested"))).toBe("rested")
    }))

  it.effect("a deep page still waiting after DEEP_WAIT is refused as unavailable, without being read", () =>
    Effect.gen(function*() {
      const gate = yield* makeDeepPages()
      const first = yield* holdingTurn(gate)
      let read = false
      const refused = yield* Effect.fork(gate(deep, Effect.sync(() => (read = true))))
      yield* TestClock.adjust(Duration.sum(DEEP_WAIT, Duration.millis(100)))
      const exit = yield* Fiber.await(refused)
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe("Unavailable")
      expect(read).toBe(false)
      yield* first.end
    }))

  it.effect("a deep page that fails or is interrupted gives up its turn, after the same rest", () =>
    Effect.gen(function*() {
      // With no wait at all, a deep page gets in only if the turn is free at that moment.
      const gate = yield* makeDeepPages(Duration.zero)
      expect(yield* Effect.flip(gate(deep, Effect.fail("broken")))).toBe("broken")
      expect(yield* gate(deep, Effect.succeed("at once"))).toBe("at once")
      const first = yield* holdingTurn(gate)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Fiber.interrupt(first.reading)
      expect((yield* Effect.flip(gate(deep, Effect.succeed("too soon"))))._tag).toBe("Unavailable")
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* gate(deep, Effect.succeed("next"))).toBe("next")
    }))
})
