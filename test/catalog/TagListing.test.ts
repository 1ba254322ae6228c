import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { orderedRows, search, tagListingRows } from "../../src/Catalog/Search.ts"
import { SORTS, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { backfill } from "../../src/Migrations/0019_tag_listing.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const Seqs = Schema.Array(Schema.Struct({ seq: Schema.NumberFromString }))
const Plan = Schema.Array(Schema.Struct({ "QUERY PLAN": Schema.String }))
const LIMIT = 4

for (const backend of backends) {
  describe.skipIf(!backend.available)(`listings by one tag over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("list what the catalog's own order lists, page by page, through edits, deletions and a rebuild", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const sql = yield* SqlClient.SqlClient
          const run = Date.now().toString(36)
          const tags = ["a", "b", "c"].map((_) => `tl${run}${_}`)
          // Fourteen handoffs: every tag on some, several on most, prices and savings apart and alike.
          const seqs: Array<number> = []
          for (let n = 0; n < 14; n++) {
            const filer = newAgentId()
            const own = tags.filter((_, i) => (n + i) % 3 !== 0 || n % 5 === 0)
            const response = yield* Effect.promise(() =>
              desk.request("/api/handoffs", {
                agent: filer,
                json: filing(filer, {
                  title: `Tag listing case ${n} of ${run}: retries stop after the upgrade`,
                  tags: own,
                  priceUsd: [0.5, 1, 2][n % 3],
                  reconstructUsd: [40, 40, 90, 12][n % 4]
                })
              })
            )
            const json = yield* Effect.promise(() => readJson(response))
            expect(response.status, JSON.stringify(json)).toBe(201)
            seqs.push(Number(String(json.id).replace(/^DESK-/, "")))
          }

          const same = (when: string) =>
            Effect.gen(function*() {
              for (const tag of tags) {
                for (const sort of SORTS) {
                  const expected = yield* sql`SELECT h.seq::text AS seq ${
                    orderedRows(sql, toCatalogQuery({ tag, sort, limit: 100 }))
                  }`.pipe(Effect.flatMap(Schema.decodeUnknown(Seqs)))
                  const total = expected.length
                  for (let page = 1; page <= Math.ceil(total / LIMIT) + 1; page++) {
                    const found = yield* search(sql, toCatalogQuery({ tag, sort, page, limit: LIMIT }))
                    const label = `${when}: ${tag} by ${sort}, page ${page}`
                    expect(found.rows.map((_) => Number(_.seq)), label).toEqual(
                      expected.slice((page - 1) * LIMIT, page * LIMIT).map((_) => _.seq)
                    )
                    expect([found.total, found.totalIsEstimate], label).toEqual([total, false])
                  }
                }
              }
            })
          yield* same("as filed")

          // Ties on the filing time (the order falls back to seq), a handoff retagged, one worth more (its savings
          // move), one made the demo (listed by no tag), one deleted.
          yield* sql`UPDATE handoffs SET filed_at = '2026-01-01T00:00:00Z' WHERE seq = ANY(${seqs.slice(0, 5)})`
          yield* sql`UPDATE handoffs SET tags = ARRAY[${tags[0]!}, ${tags[2]!}] WHERE seq = ${seqs[5]!}`
          yield* sql`UPDATE handoffs SET tags = '{}' WHERE seq = ${seqs[6]!}`
          yield* sql`UPDATE handoffs SET reconstruct_micro = 95000000 WHERE seq = ${seqs[7]!}`
          // One demo at most: the seeded one stands aside meanwhile.
          const demo = yield* sql`SELECT seq::text AS seq FROM handoffs WHERE is_demo`.pipe(
            Effect.flatMap(Schema.decodeUnknown(Seqs))
          )
          yield* sql`UPDATE handoffs SET is_demo = false WHERE is_demo`
          yield* sql`UPDATE handoffs SET is_demo = true WHERE seq = ${seqs[8]!}`
          yield* sql`DELETE FROM handoff_sales WHERE handoff_seq = ${seqs[9]!}`
          yield* sql`DELETE FROM handoffs WHERE seq = ${seqs[9]!}`
          yield* same("after edits")
          yield* sql`UPDATE handoffs SET is_demo = false WHERE seq = ${seqs[8]!}`
          yield* sql`UPDATE handoffs SET is_demo = true WHERE seq = ANY(${demo.map((_) => _.seq)})`
          yield* same("after the demo went back")

          yield* sql`DELETE FROM tag_listing`
          yield* backfill
          yield* same("after a rebuild")
        }))

      it.effect("a deep page by one tag is read from an index in its sort's order, never sorted", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          for (const sort of ["recent", "relevance", "savings"] as const) {
            const page = sql`LIMIT 101 OFFSET 9900`
            const listed = tagListingRows(sql, toCatalogQuery({ tag: "postgresql", sort }), page)!
            // Forbidding sequential scans and sorts leaves an index the only way to the order, when one exists.
            const plan = yield* sql.withTransaction(
              Effect.zipRight(
                sql`SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off`,
                sql`EXPLAIN SELECT h.seq ${listed}`
              )
            ).pipe(Effect.flatMap(Schema.decodeUnknown(Plan)), Effect.orDie)
            const lines = plan.map((_) => _["QUERY PLAN"])
            expect(lines.filter((line) => /\bSort\b/.test(line)), `${sort}:\n${lines.join("\n")}`).toEqual([])
            expect(lines.join("\n"), sort).toMatch(/Index Only Scan using tag_listing_/)
          }
          for (const sort of ["price", "popular", "reconstruct"] as const) {
            expect(tagListingRows(sql, toCatalogQuery({ tag: "postgresql", sort }), sql`LIMIT 1`)).toBeUndefined()
          }
        }))
    })
  })
}
