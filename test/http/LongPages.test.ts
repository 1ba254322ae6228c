import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DeskId } from "../../src/Domain/Ids.ts"
import { ITEMS_APART } from "../../src/Http/JsonParts.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filedAs } from "../support/Filed.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const FILED = ITEMS_APART + 8

for (const backend of backends) {
  describe.skipIf(!backend.available)(`pages longer than ${ITEMS_APART} items over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("are answered whole, their length exact, the same as the same items in short pages", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          for (let n = 0; n < FILED; n++) {
            yield* filedAs(DeskId.make(newAgentId()), {
              title: `Long page listing ${n}`,
              teaser: `Listing ${n} — café 漢字.`
            })
          }
          for (const path of ["/api/discover?sort=price&limit=100", "/api/handoffs?sort=price&limit=100"]) {
            const answer = yield* Effect.promise(() => desk.request(path))
            expect(answer.status, path).toBe(200)
            const bytes = Buffer.from(yield* Effect.promise(() => answer.arrayBuffer()))
            expect(Number(answer.headers.get("content-length")), path).toBe(bytes.length)
            const page = JSON.parse(bytes.toString("utf8"))
            expect(page.items.length, path).toBe(FILED)
            const short = [1, 2, 3].map((n) => path.replace("limit=100", `limit=20&page=${n}`))
            const items = []
            for (const shortPath of short) {
              items.push(...(yield* Effect.promise(() => desk.request(shortPath).then(readJson))).items)
            }
            expect(page.items, path).toEqual(items)
          }
        }))
    })
  })
}
