import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { HandoffRepo } from "../../src/Catalog/HandoffRepo.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

const fileBy = (filer: DeskId) => Effect.flatMap(Catalog, (catalog) => catalog.file(filer, decodeFiling(filing(filer))))

for (const backend of backends) {
  describe.skipIf(!backend.available)("reads by id answered together", () => {
    layer(Layer.provideMerge(HandoffRepo.layer, servicesOn(backend.layer)), { timeout: "120 seconds" })(
      `over ${backend.name}`,
      (it) => {
        it.effect("bodies read at once by buyers, strangers and filers: each reader gets only what it may read", () =>
          Effect.gen(function*() {
            const ledger = yield* Ledger
            const sql = yield* SqlClient.SqlClient
            const [filerA, filerB, buyer, signer, stranger] = [1, 2, 3, 4, 5].map(() => DeskId.make(newAgentId()))
            const a = yield* fileBy(filerA!)
            const b = yield* fileBy(filerB!)
            yield* ledger.unlock(buyer!, a.id, buyer!, Option.none())
            yield* ledger.unlock(signer!, a.id, signer!, Option.none())
            yield* ledger.unlock(signer!, b.id, signer!, Option.none())
            // A filer reads its own body only once it has unlocked it: its id is on every preview.
            yield* ledger.unlock(filerA!, a.id, filerA!, Option.none())
            yield* sql`UPDATE agents SET require_sign_in = true WHERE id = ${signer!}`.pipe(Effect.orDie)

            const bodyOf = (id: string) => `${id}'s body`
            const asked: Array<readonly [string, Option.Option<DeskId>, string]> = [
              [a.id, Option.some(buyer!), bodyOf(a.id)],
              [a.id, Option.some(stranger!), "PaymentRequired"],
              [a.id, Option.some(filerA!), bodyOf(a.id)],
              [b.id, Option.some(buyer!), "PaymentRequired"],
              [b.id, Option.some(filerB!), "PaymentRequired"],
              [a.id, Option.some(filerB!), "PaymentRequired"],
              [a.id, Option.some(signer!), "SignInRefused"],
              [a.id, Option.none(), "PaymentRequired"],
              ["DESK-999999999", Option.some(buyer!), "NotFound"]
            ]
            const bodies = new Map([[a.id, (yield* ledger.body(a.id, Option.some(buyer!))).body]])
            // Every question twenty times over, all at once and interleaved, so batches mix readers and handoffs.
            const rounds = Array.from({ length: 20 }, () => asked).flat()
            const answers = yield* Effect.forEach(
              rounds,
              ([id, reader]) =>
                ledger.body(id, reader).pipe(
                  Effect.map((read) => `${read.id}'s body:${read.body === bodies.get(read.id)}`),
                  Effect.catchAll((error) => Effect.succeed(error._tag))
                ),
              { concurrency: "unbounded" }
            )
            expect(answers).toEqual(rounds.map(([, , want]) => want.endsWith("body") ? `${want}:true` : want))
          }))

        it.effect("a read inside a transaction goes on the transaction's connection and sees its writes", () =>
          Effect.gen(function*() {
            const repo = yield* HandoffRepo
            const sql = yield* SqlClient.SqlClient
            const filer = DeskId.make(newAgentId())
            const filed = yield* fileBy(filer)
            const seq = Number(filed.id.replace("DESK-", ""))
            // On PGlite (one connection) a batch waiting for another connection would never run; on PostgreSQL it
            // would read the row as committed, without the transaction's change.
            const seen = yield* sql.withTransaction(Effect.gen(function*() {
              yield* sql`UPDATE handoffs SET title = 'Inside the transaction' WHERE seq = ${seq}`
              return [
                yield* repo.findBySeq(seq),
                yield* repo.findSealed(seq),
                yield* repo.findSealedFor(seq, filer)
              ].map((row) => Option.map(row, (_) => _.title))
            })).pipe(Effect.orDie, Effect.timeout("20 seconds"))
            expect(seen).toEqual([1, 2, 3].map(() => Option.some("Inside the transaction")))
          }))
      }
    )
  })
}
