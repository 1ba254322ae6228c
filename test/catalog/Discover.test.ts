import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { COUNT_LIMITS, search } from "../../src/Catalog/Search.ts"
import { type DiscoverParams, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const get = (path: string) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path)
      return { status: response.status, json: await readJson(response) }
    }))

const ids = (json: { items: ReadonlyArray<{ id: string }> }) => json.items.map((_) => _.id)

/** Six listings with distinct words, tags, prices, vendors and filing times to tell every filter apart. */
const LISTINGS = [
  {
    title: "Kubernetes ingress timeouts traced to keepalive",
    tags: ["kubernetes", "networking"],
    priceUsd: 0.2,
    reconstructUsd: 30,
    vendor: "Anthropic"
  },
  {
    title: "Postgres vacuum stalls on wraparound",
    tags: ["postgresql"],
    priceUsd: 1,
    reconstructUsd: 200,
    vendor: "OpenAI"
  },
  {
    title: "Terraform state drift after provider upgrade",
    tags: ["terraform", "kubernetes"],
    priceUsd: 3,
    reconstructUsd: 60,
    vendor: "anthropic"
  },
  {
    title: "Webpack to Vite migration for a legacy monorepo",
    tags: ["frontend"],
    priceUsd: 0.5,
    reconstructUsd: 500,
    vendor: "Google"
  },
  {
    title: "Kafka consumer lag from rebalance storms",
    tags: ["kafka", "networking"],
    priceUsd: 2,
    reconstructUsd: 90,
    vendor: "OpenAI"
  },
  {
    title: "Flaky Kubernetes readiness probes under CPU throttling",
    tags: ["kubernetes"],
    priceUsd: 0.05,
    reconstructUsd: 10,
    vendor: "Mistral"
  }
]

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`discover over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      const filed: Array<string> = []
      let between = ""

      it.effect("setup: file the listings", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          for (const [index, listing] of LISTINGS.entries()) {
            const agent = newAgentId()
            const { vendor, ...fields } = listing
            const response = yield* Effect.promise(() =>
              desk.request("/api/handoffs", {
                json: filing(agent, {
                  ...fields,
                  teaser: `Case ${index}: ${listing.title}.`,
                  provenance: { vendor, model: "m" }
                }),
                agent
              })
            )
            expect(response.status).toBe(201)
            filed.push((yield* Effect.promise(() => readJson(response))).id)
            if (index === 2) {
              // A real pause (the test clock would not move): `since` must fall between two filings.
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
              between = new Date().toISOString()
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
            }
          }
        }))

      it.effect("q is ranked full-text search over title, tags, teaser and contains", () =>
        Effect.gen(function*() {
          const { json } = yield* get("/api/discover?q=kubernetes")
          expect(new Set(ids(json))).toEqual(new Set([filed[0], filed[2], filed[5]]))
          expect(json.query).toMatchObject({
            q: "kubernetes",
            sort: "",
            tag: "",
            maxPrice: null,
            since: null,
            vendor: "",
            vendorNote: "",
            // As the spec says of the echo: unset text values are empty strings, other unset values null.
            page: null,
            limit: null
          })
          expect(json).toMatchObject({ page: 1, limit: 20 })
          expect((yield* get("/api/discover?q=kubernetes&page=1&limit=5")).json.query).toMatchObject({
            page: 1,
            limit: 5
          })
          // Two title hits outrank a tag-only hit.
          expect(ids(json).indexOf(filed[2]!)).toBe(2)
          const stemmed = yield* get("/api/discover?q=probe")
          expect(ids(stemmed.json)).toEqual([filed[5]])
          const phrase = yield* get(`/api/discover?q=${encodeURIComponent("consumer lag -kubernetes")}`)
          expect(ids(phrase.json)).toEqual([filed[4]])
        }))

      it.effect("a query that matches nothing as written is broadened, words as prefixes then any word; match says so", () =>
        Effect.gen(function*() {
          const search = (q: string, route = "/api/discover") => get(`${route}?q=${encodeURIComponent(q)}`)
          const exact = yield* search("postgresql vacuum stall")
          expect([ids(exact.json), exact.json.match]).toEqual([[filed[1]], "exact"])
          // "postgre" and "vacu" are no words of the catalog, but the start of some.
          const prefix = yield* search("Postgre vacu")
          expect([ids(prefix.json), prefix.json.match, prefix.json.total]).toEqual([[filed[1]], "prefix", 1])
          const listing = yield* search("postgre vacu", "/api/handoffs")
          expect([ids(listing.json), listing.json.match]).toEqual([[filed[1]], "prefix"])
          // No handoff holds both words: those that hold either, the one holding it twice (title and tag) first.
          const any = yield* search("kafka kubernetes")
          expect(any.json.match).toBe("any")
          expect(new Set(ids(any.json))).toEqual(new Set([filed[0], filed[2], filed[4], filed[5]]))
          const some = yield* search("kafk zzqx")
          expect([ids(some.json), some.json.match]).toEqual([[filed[4]], "any"])
          // The same page a second time is found the same way; a second page too.
          const paged = (page: number) =>
            get(`/api/discover?q=${encodeURIComponent("kafka kubernetes")}&limit=2&page=${page}`)
          const [one, two] = [yield* paged(1), yield* paged(2)]
          expect([one.json.match, two.json.match]).toEqual(["any", "any"])
          expect(new Set([...ids(one.json), ...ids(two.json)])).toEqual(new Set(ids(any.json)))
          // Stop words are no words to look for; the words that mean something are, the handoff holding most first.
          const asked = yield* search("how can i make it so that my kafka consumer stops lagging")
          expect([asked.json.match, ids(asked.json)[0]]).toEqual(["any", filed[4]])
          // A compound word's parts are words like any other; a dangling `or` or `-` is no syntax.
          expect((yield* search("kafk-consum")).json.match).toBe("any")
          expect(ids((yield* search("kafk-consum")).json)).toContain(filed[4])
          for (const plain of ["kafk or", "or kafk", "kafk -"]) {
            const answer = yield* search(plain)
            expect([answer.json.match, ids(answer.json)], plain).toEqual(["prefix", [filed[4]]])
          }
          // websearch syntax is meant as written: a phrase, `or` and `-word` are never broadened.
          for (
            const meant of ["\"kafka kubernetes\"", "kafk or zzqx", "kafk -zzqx", "kafk (-networking", "kafk or(zzqx"]
          ) {
            const answer = yield* search(meant)
            expect([answer.status, answer.json.match, answer.json.total], meant).toEqual([200, "exact", 0])
          }
          // Nothing found: the broadest way tried; no q: null.
          expect((yield* search("zzqx")).json).toMatchObject({ match: "prefix", total: 0, items: [] })
          expect((yield* search("zzqx yyqx")).json).toMatchObject({ match: "any", total: 0, items: [] })
          expect((yield* get("/api/discover?tag=kafka")).json.match).toBeNull()
          // Words to_tsquery could misread are only letters, marks and digits; stop words alone find nothing.
          for (const odd of ["ß ﬁ 中文 ’s x402 ١٢٣ e\u0301", "the of and", "a:* & b | !c <-> d", "(((", "kafk\\"]) {
            const answer = yield* search(odd)
            expect(answer.status, odd).toBe(200)
          }
          expect(ids((yield* search("a:* & kafk | !c <-> (")).json)).toEqual([filed[4]])
        }))

      it.effect("whether a way found anything is read from its page, not from a total that is the planner's estimate", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // Every total an estimate, as a large catalog's are: an estimate is never 0.
          const estimated = { ...COUNT_LIMITS, estimateTrustedAbove: 0 }
          const run = (params: DiscoverParams) => search(sql, toCatalogQuery(params), estimated).pipe(Effect.orDie)
          const broadened = yield* run({ q: "kafka kubernetes", sort: "savings" })
          expect([broadened.match, broadened.rows.length]).toEqual(["any", 4])
          const later = yield* run({ q: "kafka kubernetes", sort: "savings", limit: 2, page: 2 })
          expect([later.match, later.rows.length]).toEqual(["any", 2])
          const past = yield* run({ q: "kafka kubernetes", sort: "savings", limit: 2, page: 9 })
          expect([past.match, past.rows.length]).toEqual(["any", 0])
          // Nothing found any way: the first page says 0, not the estimate.
          expect(yield* run({ q: "zzqx yyqx", sort: "savings" })).toMatchObject({ match: "any", total: 0, rows: [] })
        }))

      it.effect("the catalog page says when a search was broadened", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const page = (q: string) =>
            Effect.promise(() =>
              desk.request(`/?q=${encodeURIComponent(q)}`, { headers: { accept: "text/html" } }).then((response) =>
                response.text()
              )
            )
          expect(yield* page("postgre vacu")).toContain("No handoff holds every word as written")
          expect(yield* page("kafka kubernetes")).toContain("No handoff holds all of your words")
          const exact = yield* page("postgresql vacuum")
          expect(exact).not.toContain("No handoff holds")
        }))

      it.effect("filters: tag, maxPrice, minSavings, minReconstruct, since, vendor", () =>
        Effect.gen(function*() {
          expect(new Set(ids((yield* get("/api/discover?tag=NETWORKING")).json))).toEqual(new Set([filed[0], filed[4]]))
          expect(new Set(ids((yield* get("/api/discover?maxPrice=0.5")).json))).toEqual(
            new Set([filed[0], filed[3], filed[5]])
          )
          expect(new Set(ids((yield* get("/api/discover?minSavings=199")).json))).toEqual(new Set([filed[1], filed[3]]))
          expect(new Set(ids((yield* get("/api/discover?minReconstruct=90")).json))).toEqual(
            new Set([filed[1], filed[3], filed[4]])
          )
          const since = yield* get(`/api/discover?since=${encodeURIComponent(between)}`)
          expect(new Set(ids(since.json))).toEqual(new Set([filed[3], filed[4], filed[5]]))
          const vendor = yield* get("/api/discover?vendor=ANTHROPIC")
          expect(new Set(ids(vendor.json))).toEqual(new Set([filed[0], filed[2]]))
          expect(vendor.json.query.vendorNote).not.toBe("")
          const combined = yield* get("/api/discover?tag=kubernetes&maxPrice=1&q=kubernetes")
          expect(new Set(ids(combined.json))).toEqual(new Set([filed[0], filed[5]]))
          expect(combined.json.query).toMatchObject({ maxPrice: 1, tag: "kubernetes" })
        }))

      it.effect("the query echo sent back as parameters (unset text values empty) searches the same", () =>
        Effect.gen(function*() {
          const first = (yield* get("/api/discover?tag=kubernetes&maxPrice=1")).json
          const echoed = new URLSearchParams()
          for (const [name, value] of Object.entries(first.query)) {
            if (name !== "vendorNote" && value !== null) echoed.set(name, String(value))
          }
          expect(echoed.get("q")).toBe("")
          for (const path of ["/api/discover", "/api/handoffs", "/"]) {
            const again = yield* get(`${path}?${echoed}`)
            expect([path, again.status, new Set(ids(again.json))]).toEqual([path, 200, new Set(ids(first))])
          }
          // An empty value is a parameter left out, a bare name too; a blank one is still refused.
          expect(ids((yield* get("/api/discover?q&tag=kubernetes&maxPrice=1&sort=")).json)).toEqual(ids(first))
          expect((yield* get("/api/discover?q=%20")).json).toMatchObject({ error: "invalid_query" })
        }))

      it.effect("sorts: recent, savings, price, reconstruct, popular", () =>
        Effect.gen(function*() {
          expect(ids((yield* get("/api/discover?sort=recent")).json)).toEqual([...filed].reverse())
          const savings = (yield* get("/api/discover?sort=savings")).json.items.map((_: { savingsUsd: number }) =>
            _.savingsUsd
          )
          expect(savings).toEqual([...savings].sort((a, b) => b - a))
          const prices = (yield* get("/api/discover?sort=price")).json.items.map((_: { priceUsd: number }) =>
            _.priceUsd
          )
          expect(prices).toEqual([0.05, 0.2, 0.5, 1, 2, 3])
          const reconstruct = (yield* get("/api/discover?sort=reconstruct")).json.items.map((
            _: { reconstructUsd: number }
          ) => _.reconstructUsd)
          expect(reconstruct).toEqual([500, 200, 90, 60, 30, 10])
          expect((yield* get("/api/discover?sort=popular")).status).toBe(200)
        }))

      it.effect("paging: limit, page, pages, next with the same filters, cap at 100", () =>
        Effect.gen(function*() {
          const first = yield* get("/api/discover?limit=4&sort=price")
          expect(first.json).toMatchObject({ total: 6, page: 1, limit: 4, pages: 2 })
          expect(first.json.next).toBe("/api/discover?limit=4&page=2&sort=price")
          const second = yield* get(first.json.next)
          expect(second.json.items.map((_: { priceUsd: number }) => _.priceUsd)).toEqual([2, 3])
          expect(second.json.next).toBeNull()
          // USD filters go on in USD (decoded, they are micro-USDC): the next page is the same search's.
          const priced = yield* get(
            "/api/discover?limit=1&sort=price&maxPrice=0.5&minSavings=9.95&minReconstruct=0.000001"
          )
          expect(priced.json.next).toBe(
            "/api/discover?limit=1&page=2&sort=price&maxPrice=0.5&minSavings=9.95&minReconstruct=0.000001"
          )
          const after = yield* get(priced.json.next)
          expect([priced.json.total, after.json.page, after.json.query.maxPrice]).toEqual([3, 2, 0.5])
          expect(after.json.items.map((_: { priceUsd: number }) => _.priceUsd)).toEqual([0.2])
          expect((yield* get("/api/discover?limit=5000")).json.limit).toBe(100)
          expect((yield* get("/api/discover?page=9")).json.items).toEqual([])
          expect((yield* get("/api/discover")).json.limit).toBe(20)
        }))

      it.effect("no listing reads past result 10,000: deeper pages are a 422 that says to narrow the query", () =>
        Effect.gen(function*() {
          // The deepest pages allowed (offset + limit = 10,000) are answered, empty here.
          for (
            const path of [
              "/api/discover?page=500",
              "/api/handoffs?page=100&limit=100",
              "/api/receipts?page=10000&limit=1"
            ]
          ) {
            expect((yield* get(path)).status, path).toBe(200)
          }
          for (
            const path of [
              "/api/discover?page=501",
              "/api/discover?sort=price&page=1000000000&limit=100",
              "/api/handoffs?page=101&limit=100",
              // A limit over 100 counts as 100.
              "/api/discover?page=101&limit=5000",
              "/api/receipts?page=501",
              `/api/receipts?payer=${newAgentId()}&page=10001&limit=1`
            ]
          ) {
            const { json, status } = yield* get(path)
            expect(status, path).toBe(422)
            expect(json).toMatchObject({ ok: false, error: "invalid_query" })
            expect(json.issues.map((_: { path: string }) => _.path), path).toEqual(["page"])
            expect(json.message, path).toContain("narrow the query")
            // Each listing names its own filters: a receipt listing has no q, a search no payer.
            expect(json.message, path).toContain(
              path.startsWith("/api/receipts") ? "(payer, filer)" : "(q, tag, maxPrice, minSavings, minReconstruct,"
            )
          }
        }))

      it.effect("demo packets are hidden unless include=demo", () =>
        Effect.gen(function*() {
          const hidden = yield* get("/api/discover?q=demo&limit=100")
          expect(hidden.json.items.filter((_: { title: string }) => _.title.startsWith("[demo]"))).toEqual([])
          const shown = yield* get("/api/discover?include=demo&limit=100")
          const demo = shown.json.items.filter((_: { title: string }) => _.title.startsWith("[demo]"))
          expect(demo).toHaveLength(1)
          expect(demo[0]).toMatchObject({ origin: "seed", isSeeded: true })
        }))

      it.effect("invalid parameters are a 422 invalid_query naming the parameter", () =>
        Effect.gen(function*() {
          for (
            const [query, name] of [
              ["limit=0", "limit"],
              ["limit=abc", "limit"],
              ["page=-1", "page"],
              ["sort=cheapest", "sort"],
              ["maxPrice=NaN", "maxPrice"],
              ["minSavings=Infinity", "minSavings"],
              ["minReconstruct=-5", "minReconstruct"],
              ["since=yesterday", "since"],
              // An offset that carries the time out of the years 0001-9999 (a 500 on the embedded store before).
              ["since=0001-01-01T00:00:00%2B01:00", "since"],
              ["since=9999-12-31T23:59:59-01:00", "since"],
              ["q=a%01b", "q"],
              ["include=everything", "include"],
              ["q=" + "x".repeat(201), "q"]
            ]
          ) {
            const { json, status } = yield* get(`/api/discover?${query}`)
            expect(status, query).toBe(422)
            expect(json).toMatchObject({ ok: false, error: "invalid_query" })
            expect(json.issues.map((_: { path: string }) => _.path), query).toContain(name)
          }
        }))

      it.effect("every query route names every bad parameter in one 422", () =>
        Effect.gen(function*() {
          // /api/receipts named only the first: its parameters were decoded up to their first problem.
          for (
            const [route, query, names] of [
              ["/api/receipts", "payer=x&filer=y&limit=0&page=-1", ["payer", "filer", "limit", "page"]],
              ["/api/discover", "limit=0&page=-1&sort=cheapest", ["limit", "page", "sort"]],
              ["/api/handoffs", "limit=0&page=-1&sort=cheapest", ["limit", "page", "sort"]]
            ] as const
          ) {
            const { json, status } = yield* get(`${route}?${query}`)
            expect(status, route).toBe(422)
            expect(json).toMatchObject({ ok: false, error: "invalid_query" })
            expect(json.issues.map((_: { path: string }) => _.path).sort(), route).toEqual([...names].sort())
          }
        }))

      it.effect("the catalog lists the tags in use, most used first, and demand computes gaps from them", () =>
        Effect.gen(function*() {
          const catalog = yield* get("/api/handoffs?limit=2")
          expect(catalog.json).toMatchObject({ total: 6, page: 1, limit: 2, pages: 3, sort: "recent", tagCount: 6 })
          expect(catalog.json.tags).toEqual([
            "kubernetes",
            "networking",
            "frontend",
            "kafka",
            "postgresql",
            "terraform"
          ])
          const demand = yield* get("/api/demand")
          const kubernetes = demand.json.gaps.find((_: { tag: string }) => _.tag === "kubernetes")
          // (30 + 60 + 10) / 3 in whole micro-USDC, and 2 % of it.
          expect(kubernetes).toMatchObject({
            packets: 3,
            unlocks: 0,
            gap: "unproven",
            avgReconstructUsd: 33.333333,
            suggestPriceUsd: 0.666667
          })
          expect(demand.json.pricing).toMatchObject({
            hardMinUsd: 0.000001,
            suggestedFloorUsd: 0.15,
            floorUsd: 0.15,
            maxUsd: null
          })
        }))

      it.effect("example and template", () =>
        Effect.gen(function*() {
          const example = yield* get("/api/example")
          expect(example.json).toMatchObject({ id: "EXAMPLE", priceUsd: 0, free: true })
          expect(example.json.body).toContain("Failed approaches")
          const template = yield* get("/api/template")
          expect(template.json.filingSchema.required).toEqual(
            expect.arrayContaining(["title", "teaser", "body", "filer", "filerDid", "priceUsd", "reconstructUsd"])
          )
          expect(template.json.standingOrder.length).toBeGreaterThan(3)
          expect(template.json.pricing.suggestedFloorUsd).toBe(0.15)
        }))
    })
  })
}
