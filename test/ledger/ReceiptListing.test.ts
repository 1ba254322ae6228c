import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { listReceipts, type ReceiptFilter } from "../../src/Ledger/ReceiptListing.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`receipt listings over ${backend.name}`, () => {
    it.layer(servicesOn(backend.layer), { timeout: 120_000 })((it) => {
      const filer = DeskId.make(newAgentId())
      const buyer = DeskId.make(newAgentId())
      const other = DeskId.make(newAgentId())
      /** The buyer's receipt ids, oldest first, as the setup bought them. */
      const bought: Array<string> = []

      const list = (filter: Partial<ReceiptFilter>, countedUpTo: number) =>
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            Effect.orDie(listReceipts(sql, { payer: null, filer: null, limit: 20, offset: 0, ...filter }, countedUpTo))
        )
      const ids = (rows: ReadonlyArray<{ readonly receipt_id: string }>) => rows.map((_) => _.receipt_id)
      /** The buyer's receipts newest first, from `from` on. */
      const newest = (from: number, count: number) => [...bought].reverse().slice(from, from + count)

      it.effect("setup: one filer's eight handoffs, six bought by one buyer and two by another, one at a time", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          const ledger = yield* Ledger
          const handoffs: Array<string> = []
          for (let i = 0; i < 8; i++) {
            const filed = yield* catalog.file(
              filer,
              decodeFiling(filing(filer, { title: `Receipt listing filing ${i} ${newAgentId().slice(-8)}` }))
            )
            handoffs.push(filed.id)
          }
          for (const id of handoffs.slice(0, 6)) {
            const unlocked = yield* ledger.unlock(buyer, id, buyer, Option.none())
            bought.push(unlocked.response.receipt.receiptId)
          }
          for (const id of handoffs.slice(6)) yield* ledger.unlock(other, id, other, Option.none())
        }))

      it.effect("a total within the count is exact, and the pages list the receipts newest first", () =>
        Effect.gen(function*() {
          const first = yield* list({ payer: buyer, limit: 4 }, 10)
          expect(first.total).toBe(6)
          expect(ids(first.rows)).toEqual(newest(0, 4))
          const second = yield* list({ payer: buyer, limit: 4, offset: 4 }, 10)
          expect(second.total).toBe(6)
          expect(ids(second.rows)).toEqual(newest(4, 2))
          const past = yield* list({ payer: buyer, limit: 4, offset: 8 }, 10)
          expect(past).toEqual({ rows: [], total: 6 })
          // Each row comes with its handoff's title, joined after the page was taken.
          expect(first.rows.every((row) => row.title.startsWith("Receipt listing filing"))).toBe(true)
        }))

      it.effect("the filer's receipts count both buyers; the whole listing holds every receipt", () =>
        Effect.gen(function*() {
          expect((yield* list({ filer }, 10)).total).toBe(8)
          expect((yield* list({ filer, payer: other }, 10)).total).toBe(2)
          const all = yield* list({}, 100)
          expect(all.total).toBe(8)
          expect(all.rows).toHaveLength(8)
        }))

      it.effect("past the count the total is at least every receipt a page has seen, so no page is hidden", () =>
        Effect.gen(function*() {
          // Counted up to 3 of the buyer's 6: the total is the planner's estimate, never below what was read.
          const page1 = yield* list({ payer: buyer, limit: 2 }, 3)
          expect(ids(page1.rows)).toEqual(newest(0, 2))
          expect(page1.total).toBeGreaterThanOrEqual(4)
          // Counted up to 1: rows 3-4 and one past them, so a following page exists and the total says so.
          const page2 = yield* list({ payer: buyer, limit: 2, offset: 2 }, 1)
          expect(ids(page2.rows)).toEqual(newest(2, 2))
          expect(page2.total).toBeGreaterThanOrEqual(5)
          const page3 = yield* list({ payer: buyer, limit: 2, offset: 4 }, 1)
          expect(ids(page3.rows)).toEqual(newest(4, 2))
          expect(page3.total).toBeGreaterThanOrEqual(6)
        }))
    })
  })
}
