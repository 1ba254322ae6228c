import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { fitListing, LISTING_MAX_BYTES } from "../../src/Catalog/ListingBudget.ts"
import { COUNT_LIMITS, search } from "../../src/Catalog/Search.ts"
import { type DiscoverParams, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { largestFiling, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

describe("fitListing", () => {
  it("keeps an ordinary page whole and cuts a heavy one at the last item that fits", () => {
    const small = Array.from({ length: 100 }, (_, i) => ({ id: i, text: "x".repeat(2_000) }))
    expect(fitListing(small)).toEqual({ items: small, omitted: 0 })

    // Control characters are escaped to six bytes each: the worst a string can weigh.
    const heavy = Array.from({ length: 100 }, (_, i) => ({ id: i, text: "\u0001".repeat(20_000) }))
    const fitted = fitListing(heavy)
    expect(fitted.items.length + fitted.omitted).toBe(100)
    expect(bytes(fitted.items)).toBeLessThanOrEqual(LISTING_MAX_BYTES)
    expect(bytes(heavy.slice(0, fitted.items.length + 1))).toBeGreaterThan(LISTING_MAX_BYTES)
  })

  it("never bounds an item below its JSON size, so the cheap check never keeps one over the budget", () => {
    const values: Array<unknown> = [
      {},
      Array.from({ length: 50 }, () => ({})),
      { a: { b: { c: {} } }, d: [[], [{}]] },
      { "\u00e9": "\u00fc\u{1F600}", n: -1.2345678901234567e-300, t: true, z: null },
      ["\u0001\u001f\"\\", false, 0],
      { filedAt: new Date(0), nested: [new Date(8.64e15)] },
      {
        self: "x".repeat(10),
        toJSON() {
          return this
        }
      },
      Object.assign(Object.create({ inherited: "x".repeat(100) }), { own: 1 })
    ]
    for (const value of values) {
      // One byte short of the item's own size: only a bound below that size would keep it.
      expect(fitListing([value], bytes(value)), JSON.stringify(value)).toEqual({ items: [], omitted: 1 })
      expect(fitListing([value], bytes(value) + 1)).toEqual({ items: [value], omitted: 0 })
    }
  })
})

for (const backend of backends) {
  describe.skipIf(!backend.available)(`listings of the largest previews, over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 180_000 })((it) => {
      it.effect("REST and MCP stay under the budget, saying how many items of the page they left out", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const tags: Array<string> = []
          for (let n = 0; n < 20; n++) {
            const agent = newAgentId()
            const filed = yield* Effect.promise(() =>
              desk.request("/api/handoffs", { json: largestFiling(agent, n), agent })
            )
            expect(filed.status).toBe(201)
            tags.push((yield* Effect.promise(() => readJson(filed))).tags[0])
          }

          // The database hands over the page only as far as the budget reaches, in the page's order, on each way a
          // listing is read: by tag alone (the tag's own index), by text, by another sort with its count, and
          // with the planner's estimate as the total (every estimate trusted as large here).
          const sql = yield* SqlClient.SqlClient
          const newestFirst = yield* Effect.promise(() => desk.request("/api/handoffs?limit=5").then(readJson))
          const fittedItems = (yield* Effect.promise(() => desk.request("/api/handoffs?limit=100").then(readJson)))
            .items.length
          const ways: Array<[DiscoverParams, typeof COUNT_LIMITS]> = [
            [{ limit: 100 }, COUNT_LIMITS],
            [{ limit: 100, tag: tags[0]! }, COUNT_LIMITS],
            [{ limit: 100, q: "teaser", sort: "recent" }, COUNT_LIMITS],
            [{ limit: 100, sort: "price" }, COUNT_LIMITS],
            [{ limit: 100 }, { ...COUNT_LIMITS, estimateTrustedAbove: 0 }]
          ]
          for (const [params, limits] of ways) {
            const read = yield* Effect.orDie(search(sql, toCatalogQuery(params), limits))
            const label = JSON.stringify(params)
            // About 70 KB each in the database's JSON: 15 fit in the budget, the last one handed over crosses it.
            expect(read.rows.length, label).toBeGreaterThanOrEqual(fittedItems)
            expect(read.rows.length, label).toBeLessThanOrEqual(16)
            expect(read.rows.length + read.omitted, label).toBe(20)
            expect(read.total, label).toBeGreaterThanOrEqual(20)
            if (params.sort !== "price") {
              expect(read.rows.slice(0, 5).map((row) => `DESK-${row.seq}`), label).toEqual(
                newestFirst.items.map((item: { id: string }) => item.id)
              )
            }
          }
          for (const path of ["/api/discover?limit=100", "/api/handoffs?limit=100"]) {
            const text = yield* Effect.promise(() => desk.request(path).then((response) => response.text()))
            const page = JSON.parse(text)
            expect(Buffer.byteLength(text), path).toBeLessThan(LISTING_MAX_BYTES + 64 * 1024)
            expect(page.items.length, path).toBeGreaterThan(5)
            expect(page.items.length + page.itemsOmitted, path).toBe(20)
          }
          const ordinary = yield* Effect.promise(() => desk.request("/api/discover?limit=5").then(readJson))
          expect(ordinary.items).toHaveLength(5)
          expect(ordinary.itemsOmitted).toBeUndefined()

          const text = yield* Effect.promise(async () => {
            const client = new Client({ name: "desk-test", version: "1.0.0" })
            await client.connect(new StreamableHTTPClientTransport(new URL(`${desk.url}/mcp`)))
            const result = await client.callTool({ name: "search_handoffs", arguments: { limit: 100 } })
            await client.close()
            return (result.content as Array<{ text: string }>)[0]!.text
          })
          const found = JSON.parse(text)
          expect(Buffer.byteLength(text)).toBeLessThan(LISTING_MAX_BYTES + 64 * 1024)
          expect(found.items.length + found.itemsOmitted).toBe(20)
        }))
    })
  })
}
