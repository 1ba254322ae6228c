import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { fitListing, LISTING_MAX_BYTES } from "../../src/Catalog/ListingBudget.ts"
import { COUNT_LIMITS, search } from "../../src/Catalog/Search.ts"
import { type DiscoverParams, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, largestFiling, newAgentId } from "../support/Fixtures.ts"
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

/** Largest filings: more than the database hands over of a page of them, so its cut shows. */
const LARGEST = 30
/** Filings whose database JSON outweighs their answer, enough of them for a page to pass the budget. */
const HEAVIER = 110

const pad = (prefix: string, n: number) => prefix + "x".repeat(n - prefix.length)
/**
 * About 10.5 KB in an answer and 0.5 KB more as the database's JSON: jsonb writes 5e-324 as 326 digits and spaces
 * its members, and the answer leaves out `whyBuy` for a claimed saving this extreme (found by a review).
 */
const heavierInDatabase = (agent: string, n: number) =>
  filing(agent, {
    title: pad(`heavier ${n} `, 200),
    teaser: pad(`teaser ${n} `, 1_000),
    whyPay: pad(`why ${n} `, 1_000),
    tags: ["heavier", ...Array.from({ length: 19 }, (_, k) => pad(`t${k}-`, 40))],
    doesNotContain: Array.from({ length: 30 }, (_, k) => pad(`never ${n} ${k} `, 200)),
    priceUsd: 0.000001,
    reconstructUsd: 1,
    provenance: {
      vendor: "v",
      model: "m",
      agentName: "a",
      inputTokens: 1,
      outputTokens: 1,
      totalTokens: 1,
      durationMs: 5e-324,
      durationMinutes: 5e-324,
      contextWindow: 5e-324,
      tools: Array.from({ length: 50 }, (_, k) => String.fromCharCode(97 + (k % 26)))
    }
  })

const fileAll = (count: number, make: (agent: string, n: number) => unknown) =>
  Effect.gen(function*() {
    const desk = yield* TestDesk
    const filed: Array<{ readonly tags: ReadonlyArray<string> }> = []
    for (let n = 0; n < count; n++) {
      const agent = newAgentId()
      const response = yield* Effect.promise(() => desk.request("/api/handoffs", { json: make(agent, n), agent }))
      expect(response.status).toBe(201)
      filed.push(yield* Effect.promise(() => readJson(response)))
    }
    return filed
  })

for (const backend of backends) {
  describe.skipIf(!backend.available)(`listings of the largest previews, over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 300_000 })((it) => {
      it.effect("REST and MCP stay under the budget, saying how many items of the page they left out", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const tags = (yield* fileAll(LARGEST, largestFiling)).map((filed) => filed.tags[0]!)

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
            // About 70 KB each in the answer, 50 KB of it the texts the database weighs: 15 fit in the budget,
            // and the database hands over the 21 whose texts do and the one that crosses it.
            expect(read.rows.length, label).toBeGreaterThanOrEqual(fittedItems)
            expect(read.rows.length, label).toBeLessThanOrEqual(22)
            expect(read.rows.length + read.omitted, label).toBe(LARGEST)
            expect(read.total, label).toBeGreaterThanOrEqual(LARGEST)
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
            expect(page.items.length + page.itemsOmitted, path).toBe(LARGEST)
          }
          // The catalog page for people says what it left out and links to it (its next page begins after them).
          const asHtml = (path: string) =>
            Effect.promise(() =>
              desk.request(path, { headers: { accept: "text/html" } }).then((response) => response.text())
            )
          const shown = yield* asHtml("/?limit=100")
          const shownIds = [...shown.matchAll(/<h3><a href="\/h\/(DESK-\d+)">/g)].map((match) => match[1])
          const leftOut = /(\d+) more results of this page were left out[^<]*<a href="([^"]+)">/.exec(shown)
          expect(leftOut?.[1]).toBe(String(LARGEST - shownIds.length))
          const firstLeftOut = (yield* Effect.promise(() =>
            desk.request(`/api/handoffs?limit=5&page=${Math.floor(shownIds.length / 5) + 1}`).then(readJson)
          )).items[shownIds.length % 5].id
          expect(yield* asHtml(leftOut![2]!.replaceAll("&amp;", "&"))).toContain(`href="/h/${firstLeftOut}"`)

          const ordinary = yield* Effect.promise(() =>
            desk.request("/api/discover?limit=5").then(readJson)
          )
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
          expect(found.items.length + found.itemsOmitted).toBe(LARGEST)
        }))

      it.effect("never cuts a page short of what fits, whatever the database's own JSON of it weighs", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          yield* fileAll(HEAVIER, heavierInDatabase)
          for (const query of ["tag=heavier", "tag=heavier&sort=price", "q=heavier&sort=recent"]) {
            // The same listing in pages of 10, which the database never cuts, fitted as the desk fits a page.
            const reference: Array<{ readonly id: string }> = []
            for (let page = 1; page <= 11; page++) {
              reference.push(
                ...(yield* Effect.promise(() =>
                  desk.request(`/api/discover?${query}&limit=10&page=${page}`).then(readJson)
                ))
                  .items
              )
            }
            for (const limit of [99, 100]) {
              const path = `/api/discover?${query}&limit=${limit}`
              const page = yield* Effect.promise(() => desk.request(path).then(readJson))
              const fitted = fitListing(reference.slice(0, limit))
              expect(fitted.items.length, path).toBeGreaterThan(90)
              expect(page.items.map((item: { id: string }) => item.id), path).toEqual(
                fitted.items.map((item) => item.id)
              )
              expect(page.itemsOmitted, path).toBe(fitted.omitted === 0 ? undefined : fitted.omitted)
            }
          }
        }))
    })
  })
}
