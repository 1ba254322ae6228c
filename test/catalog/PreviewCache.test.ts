import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

/** A change that no trigger sees (replica role): only a cache that serves would hide it. */
const unannounced = (seq: number, title: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.zipRight(
        sql`SET LOCAL session_replication_role = replica`,
        sql`UPDATE handoffs SET title = ${title} WHERE seq = ${seq}`
      )
    )).pipe(Effect.orDie)

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

            // A change made here: the next read sees it, with no wait for the announcement.
            const buyer = DeskId.make(newAgentId())
            yield* ledger.unlock(buyer, filed.id, buyer, Option.none())
            expect(yield* catalog.get(filed.id)).toMatchObject({
              purchases: 1,
              title: "Changed behind the cache's back"
            })

            // A change by anyone else (another desk, psql) arrives by NOTIFY at its commit.
            yield* sql`UPDATE handoffs SET title = 'Changed by another writer' WHERE seq = ${seq}`.pipe(Effect.orDie)
            let title = ""
            for (let tries = 0; tries < 200 && title !== "Changed by another writer"; tries++) {
              if (tries > 0) yield* Effect.sleep("5 millis")
              title = (yield* catalog.get(filed.id)).title
            }
            expect(title).toBe("Changed by another writer")
          }))
      }
    )
  })
}
