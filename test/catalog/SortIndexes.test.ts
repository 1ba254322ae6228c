import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { orderedRows } from "../../src/Catalog/Search.ts"
import { SORTS, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const send = (path: string, init?: Parameters<TestDesk["Type"]["request"]>[1]) =>
  Effect.flatMap(TestDesk, (desk) => Effect.promise(async () => readJson(await desk.request(path, init))))

const Plan = Schema.Array(Schema.Struct({ "QUERY PLAN": Schema.String }))

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`sort indexes over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("every sort reads the deepest page of the result window from an index, never sorting the catalog", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          for (const sort of SORTS) {
            const query = toCatalogQuery({ sort, page: 100, limit: 100 })
            // Forbidding sequential scans and sorts leaves an index the only way to the order, when one exists.
            const plan = yield* sql.withTransaction(
              Effect.zipRight(
                sql`SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off`,
                sql`EXPLAIN SELECT h.seq ${orderedRows(sql, query)} LIMIT 101 OFFSET 9900`
              )
            ).pipe(Effect.flatMap(Schema.decodeUnknown(Plan)), Effect.orDie)
            const lines = plan.map((_) => _["QUERY PLAN"])
            expect(lines.filter((line) => /\bSort\b/.test(line)), `${sort}:\n${lines.join("\n")}`).toEqual([])
          }
        }))

      it.effect("popular lists by purchases, kept by trigger as sales happen", () =>
        Effect.gen(function*() {
          const tag = `pop${Date.now().toString(36)}`
          const ids: Array<string> = []
          for (let i = 0; i < 3; i++) {
            const filer = newAgentId()
            ids.push((yield* send("/api/handoffs", { json: filing(filer, { tags: [tag] }), agent: filer })).id)
          }
          // ids[1] sells twice, ids[2] once, ids[0] never.
          for (const [id, buyers] of [[ids[1]!, 2], [ids[2]!, 1]] as const) {
            for (let n = 0; n < buyers; n++) {
              const buyer = newAgentId()
              yield* send(`/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer })
            }
          }
          const popular = yield* send(`/api/discover?sort=popular&tag=${tag}`)
          expect(popular.items.map((_: { id: string; purchases: number }) => [_.id, _.purchases])).toEqual([
            [ids[1], 2],
            [ids[2], 1],
            [ids[0], 0]
          ])
        }))
    })
  })
}
