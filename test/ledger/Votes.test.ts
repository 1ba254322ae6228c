import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { filedAs } from "../support/Filed.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

/** A handoff's kept vote counts beside the votes themselves. */
const counts = (handoffId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const seq = Number(handoffId.replace("DESK-", ""))
    const [row] = yield* sql<{ useful: number; not_useful: number; counted_useful: number; counted_not: number }>`
      SELECT h.useful::int, h.not_useful::int,
        (SELECT count(*)::int FROM feedback f WHERE f.handoff_seq = h.seq AND f.useful) AS counted_useful,
        (SELECT count(*)::int FROM feedback f WHERE f.handoff_seq = h.seq AND NOT f.useful) AS counted_not
      FROM handoffs h WHERE h.seq = ${seq}`
    return row!
  }).pipe(Effect.orDie)

for (const backend of backends) {
  describe.skipIf(!backend.available)(`votes over ${backend.name}`, () => {
    it.layer(servicesOn(backend.layer), { timeout: 180_000 })((it) => {
      it.effect("buyers voting and changing their votes at once leave the counts equal to the votes", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const filer = DeskId.make(newAgentId())
          const id = yield* filedAs(filer, { title: `Votes ${newAgentId().slice(-8)}`, priceUsd: 0.01 })
          const buyers = Array.from({ length: 24 }, () => DeskId.make(newAgentId()))
          yield* Effect.forEach(buyers, (buyer) => ledger.unlock(buyer, id, buyer, Option.none()), { concurrency: 6 })
          for (let round = 0; round < 3; round++) {
            // Every buyer votes at once; half of them change their vote in the same breath.
            const votes = buyers.flatMap((buyer, i) => [
              ledger.feedback(buyer, id, (i + round) % 2 === 0),
              ...(i % 2 === 0 ? [ledger.feedback(buyer, id, (i + round) % 3 === 0)] : [])
            ])
            yield* Effect.all(votes, { concurrency: "unbounded" })
            const kept = yield* counts(id)
            expect(kept.counted_useful + kept.counted_not).toBe(buyers.length)
            expect({ useful: kept.useful, notUseful: kept.not_useful }).toEqual({
              useful: kept.counted_useful,
              notUseful: kept.counted_not
            })
          }
        }))
    })
  })
}
