import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schema } from "effect"
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
            // The listener answers its first ping shortly after the layer is built.
            yield* Effect.sleep("1 second")
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

            // A read of X that read the row before the change and answers after the cache heard it.
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
      }
    )
  })
}
