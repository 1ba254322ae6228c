import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Schema, Stream } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { noticeColumns } from "../../src/Migrations/0014_sales_unannounced.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)
const Names = Schema.Array(Schema.Struct({ name: Schema.String }))

for (const backend of backends) {
  describe.skipIf(!backend.available)("what announces a change of a handoff", () => {
    layer(servicesOn(backend.layer), { excludeTestServices: true, timeout: "120 seconds" })(
      `over ${backend.name}`,
      (it) => {
        it.effect("the notice trigger names every stored column of handoffs but purchases", () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const named = Schema.decodeUnknownSync(Names)(
              yield* sql`SELECT a.attname AS name FROM pg_trigger t
                JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = ANY(t.tgattr::int2[])
                WHERE t.tgname = 'handoffs_changed_notice' ORDER BY a.attnum`
            ).map((_) => _.name)
            // A column added to handoffs later and not named here would change unannounced: cached previews go stale.
            expect(named).toEqual(yield* noticeColumns)
            expect(named).toEqual(expect.arrayContaining(["title", "teaser", "tags", "price_micro", "useful"]))
            expect(named).not.toContain("purchases")
          }))

        // The listener is PostgreSQL's; the embedded store has no preview cache to tell.
        it.scoped.skipIf(backend.name !== "postgres")(
          "a sale announces nothing (a notifying commit waits for all others); any other change of the row does",
          () =>
            Effect.gen(function*() {
              const sql = yield* SqlClient.SqlClient
              const pg = yield* PgClient.PgClient
              const catalog = yield* Catalog
              const ledger = yield* Ledger
              const heard: Array<string> = []
              yield* Effect.forkScoped(
                Stream.runForEach(pg.listen("handoff_changed"), (payload) => Effect.sync(() => heard.push(payload)))
              )
              // Notifications arrive in commit order: once a marker sent after a change is heard, so is the change.
              const heardAfter = (marker: string) =>
                Effect.gen(function*() {
                  for (let tries = 0; tries < 400 && !heard.includes(marker); tries++) {
                    yield* sql`SELECT pg_notify('handoff_changed', ${marker})`.pipe(Effect.orDie)
                    yield* Effect.sleep("10 millis")
                  }
                  expect(heard).toContain(marker)
                })
              yield* heardAfter("listening")

              const filer = DeskId.make(newAgentId())
              const filed = yield* catalog.file(filer, decodeFiling(filing(filer)))
              const seq = String(Number(filed.id.replace("DESK-", "")))
              for (let i = 0; i < 3; i++) {
                const buyer = DeskId.make(newAgentId())
                yield* ledger.unlock(buyer, filed.id, buyer, Option.none())
              }
              yield* heardAfter("after the sales")
              expect(heard).not.toContain(seq)
              expect((yield* catalog.get(filed.id)).purchases).toBe(3)

              yield* sql`UPDATE handoffs SET useful = useful WHERE seq = ${Number(seq)}`.pipe(Effect.orDie)
              yield* heardAfter("after the vote count")
              expect(heard).toContain(seq)
            })
        )
      }
    )
  })
}
