import { SqlClient, Statement } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { search } from "../../src/Catalog/Search.ts"
import { type DiscoverParams, SORTS, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { MicroUsd } from "../../src/Domain/Money.ts"
import { DEFAULT_LIMIT } from "../../src/Domain/Paging.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

/** The statements `effect` runs, as compiled: their text and parameters. */
const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const ran: Array<readonly [string, ReadonlyArray<unknown>]> = []
    return effect.pipe(
      Statement.withTransformer((statement) => {
        ran.push(statement.compile())
        return Effect.succeed(statement)
      }),
      Effect.map((result) => ({ result, ran }))
    )
  })

interface PlanNode {
  readonly "Node Type": string
  readonly Output?: ReadonlyArray<string>
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

const FILINGS = 70
const LIMIT = 5
/** Above the default limit: such a page is also cut to the listing budget in the database. */
const CUT_LIMIT = DEFAULT_LIMIT + 1
const TAG = `deep${Date.now().toString(36)}`

// Prices, savings and reconstruction costs with ties, so each order's tie-breaker is read too.
const deepFiling = (agent: string, n: number) =>
  filing(agent, {
    title: `Deep page row ${n}: ordered listings read their page before their previews`,
    tags: [TAG],
    priceUsd: 0.25 * ((n % 7) + 1),
    reconstructUsd: 10 * ((n % 5) + 1)
  })

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`pages deep in a listing over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("build no preview for the rows they skip, and keep each order", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const sql = yield* SqlClient.SqlClient
          for (let n = 0; n < FILINGS; n++) {
            const agent = newAgentId()
            const filed = yield* Effect.promise(() =>
              desk.request("/api/handoffs", { json: deepFiling(agent, n), agent })
            )
            expect(filed.status).toBe(201)
          }
          // Every sort over the listings that read an ordered statement: filtered (estimate counted or not), and by
          // one tag in the orders its own index does not keep.
          const listings: Array<DiscoverParams> = SORTS.flatMap((sort) => [
            { sort, tag: TAG, maxPrice: MicroUsd.make(1_500_000) },
            { sort, tag: TAG, minReconstruct: MicroUsd.make(20_000_000) },
            ...(sort === "price" || sort === "reconstruct" || sort === "popular" ? [{ sort, tag: TAG }] : [])
          ])
          for (const params of listings) {
            const whole = yield* search(sql, toCatalogQuery({ ...params, limit: 100 }))
            const ids = whole.rows.map((_) => _.seq)
            expect(ids.length, JSON.stringify(params)).toBeGreaterThan(2 * CUT_LIMIT)
            // Every page of LIMIT from the third on (each skips more rows than it reads), and a third page of a limit
            // whose page is also cut to the listing budget in the database.
            const pages = [
              ...Array.from({ length: Math.ceil(ids.length / LIMIT) - 2 }, (_, i) => ({ page: i + 3, limit: LIMIT })),
              { page: 3, limit: CUT_LIMIT }
            ]
            for (const { limit, page } of pages) {
              const { ran, result } = yield* statementsOf(search(sql, toCatalogQuery({ ...params, page, limit })))
              const label = `${JSON.stringify(params)} page ${page} of ${limit}`
              // Page by page, the same handoffs in the same order as one page of all of them.
              expect(result.rows.map((_) => _.seq).slice(0, limit), label).toEqual(
                ids.slice((page - 1) * limit, page * limit)
              )
              const listing = ran.filter(([text]) => text.includes("json_build_object"))
              expect(listing, label).toHaveLength(1)
              const [text, params_] = listing[0]!
              const [{ "QUERY PLAN": plan }] = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
                `EXPLAIN (VERBOSE, FORMAT JSON) ${text}`,
                params_
              )
              const limits = nodesOf(plan[0]!.Plan).filter((node) => node["Node Type"] === "Limit")
              expect(limits.length, label).toBeGreaterThan(0)
              // The LIMIT that skips the page's offset hands on seqs, not previews built to be skipped.
              for (const node of limits) {
                expect(node.Output?.join(", "), `${label}\n${text}`).not.toMatch(/json_build_object/)
              }
            }
          }
          // And over HTTP, a deep page lists what the same listing's first page of all of them holds there.
          const all = yield* Effect.promise(async () =>
            readJson(await desk.request(`/api/discover?tag=${TAG}&sort=price&limit=100`))
          )
          const deep = yield* Effect.promise(async () =>
            readJson(await desk.request(`/api/discover?tag=${TAG}&sort=price&limit=${LIMIT}&page=4`))
          )
          expect(deep.items.map((_: { id: string }) => _.id)).toEqual(
            all.items.slice(3 * LIMIT, 4 * LIMIT).map((_: { id: string }) => _.id)
          )
        }))
    })
  })
}
