import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { Catalog } from "../../src/Catalog.ts"
import { makeTagsInUse, TAGS_RELOAD_AFTER_MS } from "../../src/Catalog/TagsInUse.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"

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

describe("the catalog's tags in use, on PGlite", () => {
  it.scoped("a filing's tags are listed at once, after the list was loaded, normalised as stored", () =>
    Effect.gen(function*() {
      const catalog = yield* Catalog
      const filer = DeskId.make(newAgentId())
      const file = (tags: Array<string>) =>
        catalog.file(filer, Schema.decodeUnknownSync(FilingRequest)(filing(filer, { tags })))
      yield* file(["ruby"])
      expect(yield* catalog.tagsInUse).toEqual(["ruby"])
      yield* file(["Zig", "ruby"])
      expect(yield* catalog.tagsInUse).toEqual(["ruby", "zig"])
    }).pipe(Effect.provide(servicesOn(Pglite.layer({})))), 60_000)
})
