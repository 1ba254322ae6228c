import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { foldTallies } from "../../src/Ledger/Tallies.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const PRICE_USD = 999_999_999.999999
const SALES = 12

const get = (path: string, accept = "application/json") =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, { headers: { accept } })
      return { status: response.status, json: accept === "application/json" ? await readJson(response) : null }
    }))

const post = (path: string, agent: string, json: unknown) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, { json, agent })
      return { status: response.status, json: await readJson(response) }
    }))

/**
 * Found by an attack review: desk receipts cost nothing, so anyone can record sales at the largest price (a
 * buyer raises its own cap). Twelve of them took the kept sums past 2^53 micro-USDC, which the desk refused to
 * read: /api/books, /api/earnings and the filer's pages answered 500 for everyone from then on. And the sums'
 * bigint columns would have overflowed at 9.2e18 micro-USDC, stopping the folds of the counters for good.
 */
for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`sums past 2^53 micro-USDC over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("keep the books, the earnings and the filer's pages answering, and the folds folding", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const filed = yield* post("/api/handoffs", filer, filing(filer, { priceUsd: PRICE_USD, reconstructUsd: 1e9 }))
          expect(filed.status).toBe(201)
          for (let sale = 0; sale < SALES; sale++) {
            const buyer = newAgentId()
            expect((yield* post("/api/agents", buyer, { id: buyer, spendCapUsd: 1e9 })).status).toBe(200)
            expect((yield* post(`/api/handoffs/${filed.json.id}/unlock`, buyer, { payer: buyer })).status).toBe(200)
          }
          const volumeUsd = PRICE_USD * SALES
          const check = Effect.gen(function*() {
            const books = yield* get("/api/books")
            expect(books.status).toBe(200)
            expect(books.json).toMatchObject({ receipts: SALES, purchases: SALES, balanced: true })
            expect(books.json.volumeUsd).toBeCloseTo(volumeUsd, -1)
            expect(books.json.filerEarningsUsd + books.json.deskFeesUsd).toBeCloseTo(volumeUsd, -1)
            const earnings = yield* get("/api/earnings")
            expect(earnings.status).toBe(200)
            expect(earnings.json.deskVolumeUsd).toBeCloseTo(volumeUsd, -1)
            const agent = yield* get(`/api/agents/${filer}`)
            expect(agent.status).toBe(200)
            expect(agent.json.earnedUsd).toBeCloseTo(volumeUsd * 0.9, -1)
            expect((yield* get(`/agents/${filer}`, "text/html")).status).toBe(200)
          })
          yield* check

          // A ledger whose sums are past bigint's 9.2e18: its next fold adds them in numeric columns.
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO books_tally (volume_micro, desk_micro, ledger_only_micro)
            VALUES (9000000000000000000, 9000000000000000000, 9000000000000000000)`
          yield* sql`INSERT INTO books_tally (volume_micro, desk_micro, ledger_only_micro)
            VALUES (9000000000000000000, 9000000000000000000, 9000000000000000000)`
          yield* foldTallies(0)
          const [books] = yield* sql<{ rows: number; volume: string }>`SELECT count(*)::int AS rows,
            sum(volume_micro)::text AS volume FROM books_tally`
          expect(books).toEqual({
            rows: 1,
            volume: String(18_000_000_000_000_000_000n + BigInt(SALES) * 999_999_999_999_999n)
          })
          const answer = yield* get("/api/books")
          expect(answer.status).toBe(200)
          expect(answer.json.balanced).toBe(true)
          expect(answer.json.volumeUsd).toBeCloseTo(18e12 + volumeUsd, -3)
        }))
    })
  })
}
