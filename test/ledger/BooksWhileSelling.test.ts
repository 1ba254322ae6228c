import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const send = (path: string, init?: Parameters<TestDesk["Type"]["request"]>[1]) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, init)
      return { status: response.status, json: await readJson(response) }
    }))

const SALES = 240
const READS = 120

for (const backend of backends) {
  describe.skipIf(!backend.available)(`the books while sales commit over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      // /api/books read its receipts and its purchase count in two statements: a sale committed between them was
      // counted in one and not the other, and the books said `balanced: false` of books that were (the bench's
      // unlock scenario read them so once in a few runs, right after its last sales).
      it.effect("every read of the books is balanced, whenever it lands among the sales", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const ids = yield* Effect.forEach([0, 1, 2], () =>
            Effect.map(send("/api/handoffs", { json: filing(filer), agent: filer }), (_) => _.json.id as string))
          const buy = (i: number) => {
            const buyer = newAgentId()
            return Effect.map(
              send(`/api/handoffs/${ids[i % ids.length]!}/unlock`, { json: { payer: buyer }, agent: buyer }),
              (_) =>
                _.status
            )
          }
          const read = Effect.map(send("/api/books"), (_) => _.json as { balanced: boolean; receipts: number })
          const [statuses, books] = yield* Effect.all([
            Effect.forEach(Array.from({ length: SALES }, (_, i) => i), buy, { concurrency: 24 }),
            Effect.forEach(Array.from({ length: READS }, () => read), (_) => _, { concurrency: 4 })
          ], { concurrency: 2 })
          expect(statuses.every((_) => _ === 200)).toBe(true)
          // Reads landed among the sales, not all before or after them.
          expect(new Set(books.map((_) => _.receipts)).size).toBeGreaterThan(2)
          expect(books.filter((_) => !_.balanced)).toEqual([])
        }))
    })
  })
}
