import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Either, FastCheck as fc, Fiber, Option, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { MicroUsd } from "../../src/Domain/Money.ts"
import { Identity } from "../../src/Identity.ts"
import { Ledger } from "../../src/Ledger.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

type Step =
  | { readonly kind: "unlock"; readonly buyer: number; readonly handoff: number }
  | { readonly kind: "cap"; readonly buyer: number; readonly capUsd: number }

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

const fileAt = (priceUsd: number) =>
  Effect.gen(function*() {
    const filer = DeskId.make(newAgentId())
    const catalog = yield* Catalog
    const preview = yield* catalog.file(filer, decodeFiling(filing(filer, { priceUsd, reconstructUsd: 500 })))
    return preview.id as string
  })

/** The books, read straight from the tables: every invariant the ledger promises. */
const checkBooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [split] = yield* sql<
    { n: string }
  >`SELECT count(*) AS n FROM receipts WHERE filer_micro + desk_micro <> price_micro`
  const [fee] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM receipts
    WHERE filer_micro <> floor(price_micro * 9 / 10)`
  const [purchases] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM handoff_sales s
    WHERE sales <> (SELECT count(*) FROM receipts r WHERE r.handoff_seq = s.handoff_seq AND r.kind <> 'self')`
  const [spend] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM agents a
    WHERE spent_micro <> (SELECT coalesce(sum(price_micro), 0) FROM receipts r WHERE r.payer = a.id AND r.kind = 'sale')
       OR spent_micro > spend_cap_micro`
  const [twice] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM
    (SELECT payer, handoff_seq FROM receipts GROUP BY 1, 2 HAVING count(*) > 1) d`
  return [split, fee, purchases, spend, twice].map((_) => Number(_!.n))
}).pipe(Effect.orDie)

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped. PGlite is one
  // connection, so only PostgreSQL shows real races; the same tests must hold on both.
  describe.skipIf(!backend.available)(`ledger over ${backend.name}`, () => {
    it.layer(servicesOn(backend.layer), { timeout: 180_000 })((it) => {
      it.effect("50 concurrent unlocks by one identity give one receipt, one purchase, one spend", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const id = yield* fileAt(0.3)
          const buyer = DeskId.make(newAgentId())
          const results = yield* Effect.all(
            Array.from({ length: 50 }, () => ledger.unlock(buyer, id, buyer, Option.none())),
            { concurrency: "unbounded" }
          )
          expect(new Set(results.map((_) => _.response.receipt.receiptId)).size).toBe(1)
          expect(results.filter((_) => !_.response.alreadyUnlocked)).toHaveLength(1)
          const agent = yield* (yield* Identity).view(buyer)
          expect(agent.spentUsd).toBe(0.3)
          expect(agent.purchases).toBe(1)
          expect(yield* checkBooks).toEqual([0, 0, 0, 0, 0])
        }))

      it.effect("an unlock that collides on (payer, handoff) is tried again, at most three times more", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const sql = yield* SqlClient.SqlClient
          const id = yield* fileAt(0.3)
          const [lucky, unlucky] = [DeskId.make(newAgentId()), DeskId.make(newAgentId())]
          // Each buyer's first `refused` receipt inserts fail as a concurrent unique insert would; the sequence
          // counts attempts (nextval is not rolled back with the failed statement).
          const collide = (buyer: DeskId, refused: number) =>
            Effect.gen(function*() {
              const name = `collide_${buyer.slice(-12)}`
              yield* sql.unsafe(`CREATE SEQUENCE ${name}`)
              yield* sql.unsafe(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                IF NEW.payer = '${buyer}' AND nextval('${name}') <= ${refused} THEN
                  RAISE unique_violation USING MESSAGE = 'test collision';
                END IF;
                RETURN NEW;
              END $$`)
              yield* sql.unsafe(
                `CREATE TRIGGER ${name} BEFORE INSERT ON receipts FOR EACH ROW EXECUTE FUNCTION ${name}()`
              )
              return name
            })
          const attempts = (name: string) =>
            Effect.map(sql.unsafe<{ n: string }>(`SELECT last_value AS n FROM ${name}`), ([row]) => Number(row!.n))
          const drop = (name: string) =>
            Effect.zipRight(sql.unsafe(`DROP TRIGGER ${name} ON receipts`), sql.unsafe(`DROP FUNCTION ${name}()`))

          const luckyName = yield* collide(lucky, 3)
          const unluckyName = yield* collide(unlucky, 100)
          const unlocked = yield* ledger.unlock(lucky, id, lucky, Option.none())
          const refused = yield* Effect.exit(ledger.unlock(unlucky, id, unlucky, Option.none()))
          yield* Effect.all([drop(luckyName), drop(unluckyName)]).pipe(Effect.orDie)

          expect(unlocked.response.alreadyUnlocked).toBe(false)
          expect(yield* attempts(luckyName)).toBe(4)
          // Beyond three retries the collision is a defect (a 500), and nothing was written for it: not even the agent.
          expect(refused._tag === "Failure" && Cause.isDie(refused.cause)).toBe(true)
          expect(yield* attempts(unluckyName)).toBe(4)
          expect((yield* Effect.flip((yield* Identity).view(unlucky)))._tag).toBe("NotFound")
          expect(yield* checkBooks).toEqual([0, 0, 0, 0, 0])
        }))

      it.effect("concurrent unlocks of different handoffs never take spend over the cap", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const ids = yield* Effect.all(Array.from({ length: 25 }, () => fileAt(1)))
          const buyer = DeskId.make(newAgentId())
          const results = yield* Effect.all(
            ids.map((id) => Effect.either(ledger.unlock(buyer, id, buyer, Option.none()))),
            { concurrency: "unbounded" }
          )
          const refused = results.filter(Either.isLeft).map((_) => _.left._tag)
          expect(results.filter(Either.isRight)).toHaveLength(10)
          expect(new Set(refused)).toEqual(new Set(["SpendCapExceeded"]))
          const agent = yield* (yield* Identity).view(buyer)
          expect(agent.spentUsd).toBe(10)
          expect(yield* checkBooks).toEqual([0, 0, 0, 0, 0])
        }))

      // The payer's lock is held by an x402 claim (as PaidUnlock's claim holds it) while the desk receipt
      // waits: what the unlock reads after the lock must include the claim, or one unlock is sold twice. On
      // PGlite (one connection) the unlock cannot start inside the other transaction, so it runs after it.
      it.effect("a desk receipt that waited on the payer's lock sees the x402 claim committed under it", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const ledger = yield* Ledger
          const id = yield* fileAt(0.5)
          const seq = Number(id.slice("DESK-".length))
          const buyer = DeskId.make(newAgentId())
          const claimed = yield* Deferred.make<void>()
          const claim = sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO agents (id) VALUES (${buyer}) ON CONFLICT (id) DO UPDATE SET id = excluded.id`
            yield* sql`INSERT INTO settlements (payer, handoff_seq, price_micro, spend_micro, x402_version,
                payer_address, nonce, valid_before, from_block, payment, status)
              VALUES (${buyer}, ${seq}, 500000, 500000, 1, '0x0000000000000000000000000000000000000001',
                '0x01', 0, 0, '{}'::jsonb, 'pending')`
            yield* Deferred.succeed(claimed, undefined)
            // Held long enough for the unlock below to be waiting on the payer's row (a real timer: it.effect's
            // clock is the TestClock).
            const holdMs = backend.name === "postgres" ? 300 : 0
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, holdMs)))
          }))
          const claiming = yield* Effect.fork(Effect.orDie(claim))
          yield* Deferred.await(claimed)
          const answer = yield* Effect.either(ledger.unlock(buyer, id, buyer, Option.none()))
          yield* Fiber.join(claiming)
          expect(Either.isLeft(answer) && answer.left._tag).toBe("SettlementPending")
          const [row] = yield* sql<{ receipts: string; spent: string }>`SELECT
            (SELECT count(*) FROM receipts WHERE payer = ${buyer}) AS receipts,
            (SELECT spent_micro FROM agents WHERE id = ${buyer}) AS spent`.pipe(Effect.orDie)
          expect([Number(row!.receipts), Number(row!.spent)]).toEqual([0, 0])
        }))

      it.effect("random unlocks, retries and cap changes keep the books balanced", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const identity = yield* Identity
          const context = yield* Effect.context<SqlClient.SqlClient>()
          const buyers = Array.from({ length: 4 }, () => DeskId.make(newAgentId()))
          const handoffs = yield* Effect.all([0.000001, 0.000009, 0.37, 1.5, 3].map(fileAt))
          const step = fc.oneof(
            fc.record({ kind: fc.constant("unlock" as const), buyer: fc.nat(3), handoff: fc.nat(4) }),
            fc.record({ kind: fc.constant("cap" as const), buyer: fc.nat(3), capUsd: fc.integer({ min: 0, max: 12 }) })
          )
          // Refusals (cap exceeded, cap below spend) are expected outcomes; only the books must hold.
          const apply = (s: Step) => {
            const buyer = buyers[s.buyer]!
            return s.kind === "unlock"
              ? Effect.ignore(ledger.unlock(buyer, handoffs[s.handoff]!, buyer, Option.none()))
              : Effect.ignore(identity.register(buyer, { id: buyer, spendCapUsd: MicroUsd.make(s.capUsd * 1_000_000) }))
          }
          const run = (steps: ReadonlyArray<Step>) =>
            Effect.forEach(steps, apply, { concurrency: 3 }).pipe(Effect.zipRight(checkBooks), Effect.provide(context))
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
                expect(await Effect.runPromise(run(steps))).toEqual([0, 0, 0, 0, 0])
              }),
              { numRuns: 25 }
            )
          )
        }))
    })
  })
}
