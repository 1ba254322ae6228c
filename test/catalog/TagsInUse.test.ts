import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, FastCheck as fc, Fiber, Schema } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { Catalog } from "../../src/Catalog.ts"
import { makeTagsInUse, TAG_LISTING_MAX, type TagCount, TAGS_RELOAD_AFTER_MS } from "../../src/Catalog/TagsInUse.ts"
import { toCatalogQuery } from "../../src/Domain/Discover.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"

const counted = (...tags: Array<string>): Array<TagCount> => {
  const uses = new Map<string, number>()
  for (const tag of tags) uses.set(tag, (uses.get(tag) ?? 0) + 1)
  return [...uses].map(([tag, n]) => ({ tag, uses: n }))
}

/** The listing as a full sort over the counts computes it. */
const expected = (counts: ReadonlyArray<TagCount>) =>
  [...counts].sort((a, b) => b.uses - a.uses || (a.tag < b.tag ? -1 : 1)).slice(0, TAG_LISTING_MAX).map((_) => _.tag)

describe("tags in use, kept in memory", () => {
  it.effect("one load serves every caller until it is due again; filings count their tags, most used first", () =>
    Effect.gen(function*() {
      let loads = 0
      let clock = 0
      let stored = counted("kafka", "postgresql")
      const tags = yield* makeTagsInUse(Effect.sync(() => (loads++, stored)), () => clock)
      const [a, b] = yield* Effect.all([tags.get(), tags.get()], { concurrency: "unbounded" })
      expect([a, b, loads]).toEqual([{ tags: ["kafka", "postgresql"], total: 2 }, {
        tags: ["kafka", "postgresql"],
        total: 2
      }, 1])

      yield* tags.add(["aws", "postgresql"])
      expect(yield* tags.get()).toEqual({ tags: ["postgresql", "aws", "kafka"], total: 3 })
      expect(loads).toBe(1)

      // Another desk filed "redis" twice: seen once the list is due for a reload.
      stored = counted("aws", "kafka", "postgresql", "postgresql", "redis", "redis", "redis")
      clock = TAGS_RELOAD_AFTER_MS - 1
      expect(yield* tags.get()).toEqual({ tags: ["postgresql", "aws", "kafka"], total: 3 })
      clock = TAGS_RELOAD_AFTER_MS
      expect(yield* tags.get()).toEqual({ tags: ["redis", "postgresql", "aws", "kafka"], total: 4 })
      expect(loads).toBe(2)
    }))

  it.effect("the listing stops at the most used few hundred and says how many there are", () =>
    Effect.gen(function*() {
      const many = Array.from(
        { length: 3 * TAG_LISTING_MAX },
        (_, i) => ({ tag: `t${String(i).padStart(4, "0")}`, uses: 1 })
      )
      const tags = yield* makeTagsInUse(Effect.succeed(many))
      const first = yield* tags.get()
      expect(first.total).toBe(3 * TAG_LISTING_MAX)
      expect(first.tags).toEqual(many.slice(0, TAG_LISTING_MAX).map((_) => _.tag))
      // The last tag by name enters the listing at the top as soon as it is used once more; one falls off.
      yield* tags.add(["t0599"])
      const second = yield* tags.get()
      expect(second.tags).toEqual(["t0599", ...first.tags.slice(0, -1)])
      expect(second.total).toBe(3 * TAG_LISTING_MAX)
      expect(first.tags).toHaveLength(TAG_LISTING_MAX)
    }))

  it.effect("counting filing by filing gives the listing a full sort of the counts gives", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 800 }),
          fc.array(fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 20 }), { maxLength: 200 }),
          async (initial, filings) => {
            const name = (n: number) => `tag-${n}`
            const start = counted(...initial.map(name))
            const listing = await Effect.runPromise(Effect.gen(function*() {
              const tags = yield* makeTagsInUse(Effect.succeed(start))
              yield* tags.get()
              for (const filed of filings) yield* tags.add([...new Set(filed.map(name))])
              return yield* tags.get()
            }))
            const all = counted(...initial.map(name), ...filings.flatMap((filed) => [...new Set(filed.map(name))]))
            expect(listing).toEqual({ tags: expected(all), total: all.length })
          }
        ),
        { numRuns: 100 }
      )
    ))

  it.effect("a listing that shows the demo packet counts its tags once more each, as a full sort would", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 800 }),
          fc.array(fc.integer({ min: 0, max: 450 }), { maxLength: 5 }),
          async (initial, extra) => {
            const name = (n: number) => `tag-${n}`
            const listing = await Effect.runPromise(
              Effect.flatMap(makeTagsInUse(Effect.succeed(counted(...initial.map(name)))), (tags) =>
                tags.get(extra.map(name)))
            )
            const all = counted(...initial.map(name), ...new Set(extra.map(name)))
            expect(listing).toEqual({ tags: expected(all), total: all.length })
          }
        ),
        { numRuns: 100 }
      )
    ))

  it.effect("a filing that commits while the list loads is not lost to the load's older snapshot", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const tags = yield* makeTagsInUse(Effect.as(Deferred.await(release), counted("kafka")))
      const loading = yield* Effect.fork(tags.get())
      yield* Effect.yieldNow()
      const adding = yield* Effect.fork(tags.add(["zig"]))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(loading)).toEqual({ tags: ["kafka"], total: 1 })
      yield* Fiber.join(adding)
      expect(yield* tags.get()).toEqual({ tags: ["kafka", "zig"], total: 2 })
    }))

  it.effect("before the first load, adding does nothing: the load will read the filing", () =>
    Effect.gen(function*() {
      const tags = yield* makeTagsInUse(Effect.succeed(counted("kafka", "zig")))
      yield* tags.add(["zig"])
      expect(yield* tags.get()).toEqual({ tags: ["kafka", "zig"], total: 2 })
    }))
})

describe("the catalog's tags in use, on PGlite", () => {
  it.scoped(
    "a filing's tags are listed at once, stored NFC, lowercase, without invisible characters",
    () =>
      Effect.gen(function*() {
        const catalog = yield* Catalog
        const filer = DeskId.make(newAgentId())
        const file = (tags: Array<string>) =>
          catalog.file(filer, Schema.decodeUnknownSync(FilingRequest)(filing(filer, { tags })))
        yield* file(["ruby"])
        expect(yield* catalog.tagsInUse(false)).toEqual({ tags: ["ruby"], total: 1 })
        // Zero-width space, a bidi override, a soft hyphen, a BOM, decomposed é and a variation selector: each
        // looks like (or is) nothing, so each tag is one that is already there or "cafe". (A tag of nothing else,
        // a Hangul filler alone, is refused: test/catalog/Filing.test.ts.)
        const filed = yield* file([
          "Zig",
          "ru\u200bby",
          "\u202eruby",
          "ru\u00adby\ufeff",
          "Cafe\u0301",
          "caf\u00e9\ufe0f",
          "  two \u2003 words "
        ])
        expect(filed.tags).toEqual(["zig", "ruby", "caf\u00e9", "two words"])
        expect(yield* catalog.tagsInUse(false)).toEqual({ tags: ["ruby", "café", "two words", "zig"], total: 4 })
        const found = yield* catalog.discover(toCatalogQuery({ tag: "R\u200bUBY" }))
        expect(found.total).toBe(2)
        expect((yield* catalog.discover(toCatalogQuery({ tag: "cafe\u0301" }))).total).toBe(1)

        // A listing that shows the demo packet (include=demo) names its tags too; one that hides it does not.
        yield* catalog.ensureDemo
        const demo = yield* catalog.discover(toCatalogQuery({ include: "demo" }))
        const demoTags = demo.items.find((item) => item.filerDid === "did:desk:00000000000000000000000000000de0")!.tags
        expect(demoTags.length).toBeGreaterThan(0)
        expect(yield* catalog.tagsInUse(false)).toEqual({ tags: ["ruby", "café", "two words", "zig"], total: 4 })
        const withDemo = yield* catalog.tagsInUse(true)
        expect(withDemo.total).toBe(4 + demoTags.length)
        expect(withDemo.tags).toEqual(expect.arrayContaining([...demoTags, "ruby", "café", "two words", "zig"]))
      }).pipe(Effect.provide(servicesOn(Pglite.layer({})))),
    60_000
  )
})
