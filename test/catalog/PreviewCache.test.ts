import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Context, Deferred, Effect, Fiber, Layer, Option, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { PreviewCache } from "../../src/Catalog/PreviewCache.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"
import { unannounced, untilCached } from "../support/Unannounced.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

for (const backend of backends) {
  describe.skipIf(!backend.available)("preview cache", () => {
    // Live clock: the cache pings its listener in real time.
    layer(servicesOn(backend.layer), { excludeTestServices: true, timeout: "120 seconds" })(
      `over ${backend.name}`,
      (it) => {
        it.effect("serves from memory on PostgreSQL, drops on every announced change, and never caches on PGlite", () =>
          Effect.gen(function*() {
            const catalog = yield* Catalog
            const ledger = yield* Ledger
            const sql = yield* SqlClient.SqlClient
            const filer = DeskId.make(newAgentId())
            const filed = yield* catalog.file(filer, decodeFiling(filing(filer)))
            const seq = Number(filed.id.replace("DESK-", ""))
            // The listener answers its first ping shortly after the layer is built. A preview is kept from its
            // second read on.
            yield* Effect.sleep("1 second")
            yield* catalog.get(filed.id)
            yield* catalog.get(filed.id)
            yield* unannounced(seq, "Changed behind the cache's back")
            const seen = (yield* catalog.get(filed.id)).title
            expect(seen).toBe(backend.name === "postgres" ? filed.title : "Changed behind the cache's back")

            // A sale announces nothing: the cached preview is still served (the title changed unannounced stays
            // hidden on PostgreSQL), with the purchase count the barrier's statement read after the sale.
            const buyer = DeskId.make(newAgentId())
            yield* ledger.unlock(buyer, filed.id, buyer, Option.none())
            expect(yield* catalog.get(filed.id)).toMatchObject({ purchases: 1, title: seen })

            // A change by anyone else (another desk, psql) arrives by NOTIFY at its commit.
            yield* sql`UPDATE handoffs SET title = 'Changed by another writer' WHERE seq = ${seq}`.pipe(Effect.orDie)
            let title = ""
            for (let tries = 0; tries < 200 && title !== "Changed by another writer"; tries++) {
              if (tries > 0) yield* Effect.sleep("5 millis")
              title = (yield* catalog.get(filed.id)).title
            }
            expect(title).toBe("Changed by another writer")
          }))

        it.effect("a read in flight when a change is heard is not kept: the next read sees the change", () =>
          Effect.gen(function*() {
            const catalog = yield* Catalog
            const cache = yield* PreviewCache
            const sql = yield* SqlClient.SqlClient
            const filer = DeskId.make(newAgentId())
            const x = yield* catalog.file(filer, decodeFiling(filing(filer)))
            const y = yield* catalog.file(filer, decodeFiling(filing(filer)))
            const [seqX, seqY] = [x, y].map((_) => Number(_.id.replace("DESK-", ""))) as [number, number]
            // Y cached and served from memory (on PostgreSQL): a later read of Y waits for a ping.
            const cached = backend.name === "pglite" ||
              (yield* untilCached(catalog.get(y.id), (title) => unannounced(seqY, title)))
            expect(cached).toBe(true)

            // A read of X that read the row before the change and answers after the cache heard it: X's second
            // read, one the cache would keep.
            yield* catalog.get(x.id)
            const started = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            const inFlight = yield* Effect.fork(cache.through(
              seqX,
              Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Deferred.await(release)),
                Effect.as(Option.some(x))
              )
            ))
            yield* Deferred.await(started)
            yield* sql`UPDATE handoffs SET title = 'X after the change' WHERE seq = ${seqX}`.pipe(Effect.orDie)
            // Reading cached Y pings through the channel: once it answers, X's announcement has been heard.
            yield* catalog.get(y.id)
            yield* Deferred.succeed(release, undefined)
            expect(Option.getOrThrow(yield* Fiber.join(inFlight)).title).toBe(x.title)
            expect((yield* catalog.get(x.id)).title).toBe("X after the change")
          }))

        // Only PostgreSQL's desks cache.
        it.scoped.skipIf(backend.name !== "postgres")(
          "keeps a preview from its second read on, and forgets first reads once it has seen as many as it holds",
          () =>
            Effect.gen(function*() {
              const catalog = yield* Catalog
              const filer = DeskId.make(newAgentId())
              const filed = yield* Effect.forEach(
                [0, 1, 2, 3, 4],
                () => catalog.file(filer, decodeFiling(filing(filer)))
              )
              const seqs = filed.map((_) => Number(_.id.replace("DESK-", "")))
              const [probe, a, b, c, e] = seqs as [number, number, number, number, number]
              // A cache of two previews of its own, over the test's database.
              const two = ConfigProvider.fromMap(new Map([["DESK_PREVIEW_CACHE", "2"]]))
              const cache = yield* Layer.build(PreviewCache.layer.pipe(Layer.provide(Layer.setConfigProvider(two))))
                .pipe(
                  Effect.map(Context.get(PreviewCache))
                )
              // Whether a read of `seq` went to its load (the database) rather than to memory.
              const loaded = (seq: number) =>
                Effect.suspend(() => {
                  let loads = 0
                  const preview = filed[seqs.indexOf(seq)]!
                  const load = Effect.sync(() => {
                    loads++
                    return Option.some(preview)
                  })
                  return Effect.map(cache.through(seq, load), () => loads > 0)
                })
              // Until its listener answers, the cache keeps nothing.
              let served = false
              for (let tries = 0; tries < 200 && !served; tries++) {
                if (tries > 0) yield* Effect.sleep("20 millis")
                served = !(yield* loaded(probe))
              }
              expect(served).toBe(true)

              const reads = yield* Effect.forEach([a, a, a, b, c, e, b, b, b], loaded)
              expect(reads).toEqual([
                true, // a's first read: not kept
                true, // its second: kept
                false, // served
                true, // b: the doorkeeper had seen two (probe and a) and starts over
                true, // c
                true, // e: starts over again, forgetting b
                true, // b's read is a first read again: not kept
                true, // kept
                false
              ])
            })
        )
      }
    )
  })
}
