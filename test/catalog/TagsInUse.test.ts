import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeTagsInUse, TAGS_RELOAD_AFTER_MS } from "../../src/Catalog/TagsInUse.ts"

describe("tags in use, kept in memory", () => {
  it.effect("one load serves every caller until it is due again; filings add their tags in order", () =>
    Effect.gen(function*() {
      let loads = 0
      let clock = 0
      let stored = ["kafka", "postgresql"]
      const tags = yield* makeTagsInUse(Effect.sync(() => (loads++, stored)), () => clock)
      const [a, b] = yield* Effect.all([tags.get, tags.get], { concurrency: "unbounded" })
      expect([a, b, loads]).toEqual([["kafka", "postgresql"], ["kafka", "postgresql"], 1])

      yield* tags.add(["aws", "kafka"])
      expect(yield* tags.get).toEqual(["aws", "kafka", "postgresql"])
      expect(loads).toBe(1)

      // Another desk filed "redis": seen once the list is due for a reload.
      stored = ["aws", "kafka", "postgresql", "redis"]
      clock = TAGS_RELOAD_AFTER_MS - 1
      expect(yield* tags.get).toEqual(["aws", "kafka", "postgresql"])
      clock = TAGS_RELOAD_AFTER_MS
      expect(yield* tags.get).toEqual(["aws", "kafka", "postgresql", "redis"])
      expect(loads).toBe(2)
    }))

  it.effect("a filing that commits while the list loads is not lost to the load's older snapshot", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const tags = yield* makeTagsInUse(Effect.as(Deferred.await(release), ["kafka"]))
      const loading = yield* Effect.fork(tags.get)
      yield* Effect.yieldNow()
      const adding = yield* Effect.fork(tags.add(["zig"]))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(loading)).toEqual(["kafka"])
      yield* Fiber.join(adding)
      expect(yield* tags.get).toEqual(["kafka", "zig"])
    }))

  it.effect("before the first load, adding does nothing: the load will read the filing", () =>
    Effect.gen(function*() {
      const tags = yield* makeTagsInUse(Effect.succeed(["kafka", "zig"]))
      yield* tags.add(["zig"])
      expect(yield* tags.get).toEqual(["kafka", "zig"])
    }))
})
