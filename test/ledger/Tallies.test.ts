import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { HandoffRepo } from "../../src/Catalog/HandoffRepo.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { OWED } from "../../src/Ledger/Rules.ts"
import { boughtBy, filedBy, foldTallies } from "../../src/Ledger/Tallies.ts"
import { backfill } from "../../src/Migrations/0011_kept_counters.ts"
import { mendCounts } from "../../src/Migrations/0020_tally_locks.ts"
import { COUNTED_TABLES } from "../../src/Migrations/0021_no_truncate.ts"
import { filedAs } from "../support/Filed.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { whileHeld } from "../support/HeldLocks.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const TAGS = ["ruby", "postgresql", "redis", "k8s", "rust"]

/**
 * The scans /api/books, /api/demand and the tags in use ran before the counters were kept: the reference they
 * must equal.
 */
const scanned = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [totals] = yield* sql`SELECT count(*)::int AS receipts,
      coalesce(sum(price_micro), 0)::bigint::text AS volume_micro,
      coalesce(sum(filer_micro), 0)::bigint::text AS filer_micro,
      coalesce(sum(desk_micro), 0)::bigint::text AS desk_micro,
      coalesce(sum(price_micro) FILTER (WHERE mode = 'x402'), 0)::bigint::text AS on_chain_micro,
      coalesce(sum(price_micro) FILTER (WHERE mode = 'desk'), 0)::bigint::text AS ledger_only_micro,
      coalesce(sum(filer_micro) FILTER (WHERE payout_status = 'sent'), 0)::bigint::text AS filer_paid_on_chain_micro,
      count(*) FILTER (WHERE payout_status = 'sent')::int AS on_chain_payouts,
      coalesce(sum(filer_micro) FILTER (WHERE payout_status IN ${sql.in(OWED)}), 0)::bigint::text AS filer_owed_micro,
      coalesce(sum(filer_micro) FILTER (WHERE payout_status = 'ledger'), 0)::bigint::text AS filer_ledger_micro,
      count(DISTINCT payer)::int AS buyers,
      coalesce(sum(filer_micro), 0) + coalesce(sum(desk_micro), 0) = coalesce(sum(price_micro), 0) AS split_exact
    FROM receipts WHERE kind = 'sale'`
  const [census] = yield* sql`SELECT count(*)::int AS handoffs, count(DISTINCT filer_did)::int AS filers,
      coalesce(sum(s.sales), 0)::int AS purchases
    FROM handoffs h JOIN handoff_sales s ON s.handoff_seq = h.seq WHERE NOT is_demo`
  const tags = yield* sql`SELECT tag, count(*)::int AS packets, coalesce(sum(s.sales), 0)::int AS unlocks,
      round(avg(reconstruct_micro))::bigint::text AS avg_reconstruct_micro
    FROM handoffs h JOIN handoff_sales s ON s.handoff_seq = h.seq, unnest(tags) AS tag WHERE NOT is_demo
    GROUP BY tag ORDER BY unlocks DESC, packets DESC, tag LIMIT 50`
  // In code point order, as the kept side sorts them below.
  const inUse = yield* sql`SELECT tag, count(*)::int AS uses FROM handoffs, unnest(tags) AS tag WHERE NOT is_demo
    GROUP BY tag ORDER BY tag COLLATE "C"`
  const filers = yield* sql`SELECT filer_did, count(*)::int AS handoffs FROM handoffs WHERE NOT is_demo
    GROUP BY filer_did ORDER BY filer_did`
  const buyers = yield* sql`SELECT payer, count(*)::int AS sales FROM receipts WHERE kind = 'sale'
    GROUP BY payer ORDER BY payer`
  return { totals, census, tags, inUse, filers, buyers }
}).pipe(Effect.orDie)

/** What the desk now reads, in the shape of `scanned`. */
const kept = Effect.gen(function*() {
  const ledger = yield* Ledger
  const catalog = yield* Catalog
  const [{ filers: filerCount, handoffs, purchases, ...totals }, tags] = yield* Effect.all([
    ledger.totals,
    catalog.tagStats
  ])
  // Read from the repository: the catalog's own listing serves a loaded copy for a minute.
  const inUse = yield* Effect.provide(Effect.flatMap(HandoffRepo, (repo) => repo.tagCounts), HandoffRepo.layer)
  // Each filer's count, as an agent's pages read it (filedBy), for the filers the scan names.
  const sql = yield* SqlClient.SqlClient
  const named = yield* sql<{ readonly filer_did: string }>`SELECT DISTINCT filer_did FROM handoffs
    WHERE NOT is_demo ORDER BY filer_did`
  const filers = yield* Effect.forEach(named, ({ filer_did }) =>
    Effect.map(
      sql<{ readonly handoffs: number }>`SELECT ${filedBy(sql, filer_did)}::int AS handoffs`,
      ([row]) => ({ filer_did, handoffs: row!.handoffs })
    ))
  // Each buyer's sales, as an agent's pages read them (boughtBy), for every payer: one with none reads 0.
  const payers = yield* sql<{ readonly payer: string }>`SELECT DISTINCT payer FROM receipts ORDER BY payer`
  const counted = yield* Effect.forEach(payers, ({ payer }) =>
    Effect.map(
      sql<{ readonly sales: number }>`SELECT ${boughtBy(sql, payer)}::int AS sales`,
      ([row]) => ({ payer, sales: row!.sales })
    ))
  const buyers = counted.filter((_) => _.sales > 0)
  const text = (n: number) => String(n)
  return {
    totals: {
      ...totals,
      volume_micro: text(totals.volume_micro),
      filer_micro: text(totals.filer_micro),
      desk_micro: text(totals.desk_micro),
      on_chain_micro: text(totals.on_chain_micro),
      ledger_only_micro: text(totals.ledger_only_micro),
      filer_paid_on_chain_micro: text(totals.filer_paid_on_chain_micro),
      filer_owed_micro: text(totals.filer_owed_micro),
      filer_ledger_micro: text(totals.filer_ledger_micro)
    },
    census: { handoffs, filers: filerCount, purchases },
    tags: tags.map((_) => ({ ..._, avg_reconstruct_micro: text(_.avg_reconstruct_micro) })),
    inUse: [...inUse].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)),
    filers,
    buyers
  }
})

const fileAs = (filer: DeskId, i: number) =>
  filedAs(filer, {
    title: `Kept counter filing ${i} ${newAgentId().slice(-8)}`,
    priceUsd: 0.01 * (1 + (i % 7)),
    reconstructUsd: (3_000_000 + i * 1_000_001) / 1_000_000,
    tags: [TAGS[i % TAGS.length]!, TAGS[(i * 3 + 1) % TAGS.length]!]
  })

for (const backend of backends) {
  describe.skipIf(!backend.available)(`kept counters over ${backend.name}`, () => {
    it.layer(servicesOn(backend.layer), { timeout: 180_000 })((it) => {
      it.effect("concurrent filings, unlocks and folds leave the counters equal to the scans", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const filers = Array.from({ length: 4 }, () => DeskId.make(newAgentId()))
          const ids = yield* Effect.all(
            Array.from({ length: 24 }, (_, i) => fileAs(filers[i % filers.length]!, i)),
            { concurrency: 8 }
          )
          const buyers = Array.from({ length: 6 }, () => DeskId.make(newAgentId()))
          const unlocks = buyers.flatMap((buyer, b) =>
            ids.filter((_, i) => (i + b) % 3 === 0).map((id) =>
              Effect.ignore(ledger.unlock(buyer, id, buyer, Option.none()))
            )
          )
          // A filer buying its own handoff writes a self receipt, which the books leave out.
          const own = Effect.ignore(ledger.unlock(filers[0]!, ids[0]!, filers[0]!, Option.none()))
          const folds = Array.from({ length: 6 }, () => foldTallies(1))
          yield* Effect.all([...unlocks, own, ...folds, ...unlocks], { concurrency: 12 })
          const reference = yield* scanned
          expect((reference.totals as { receipts: number }).receipts).toBeGreaterThan(20)
          expect(yield* kept).toEqual(reference)
          yield* foldTallies(1)
          expect(yield* kept).toEqual(reference)
        }))

      it.effect("payout moves, changed and removed handoffs, and removed receipts are counted back out", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const ledger = yield* Ledger
          const filer = DeskId.make(newAgentId())
          const [a, b] = yield* Effect.all([fileAs(filer, 100), fileAs(filer, 101)])
          const buyer = DeskId.make(newAgentId())
          const receipt = yield* ledger.unlock(buyer, a!, buyer, Option.none())
          const receiptId = receipt.response.receipt.receiptId
          const check = Effect.flatMap(scanned, (reference) => Effect.map(kept, (_) => expect(_).toEqual(reference)))
          for (const status of ["owed", "pending", "sent"]) {
            yield* sql`UPDATE receipts SET mode = 'x402', payout_status = ${status} WHERE receipt_id = ${receiptId}`
            yield* check
          }
          const seqOf = (id: string) => Number(id.replace("DESK-", ""))
          yield* sql`UPDATE handoffs SET tags = ARRAY['zig', 'zig'], reconstruct_micro = reconstruct_micro + 7
            WHERE seq = ${seqOf(a!)}`
          yield* check
          yield* sql`DELETE FROM receipts WHERE receipt_id = ${receiptId}`
          yield* sql`UPDATE handoff_sales SET sales = 0 WHERE handoff_seq = ${seqOf(a!)}`
          yield* check
          // A tag only b names: in use, then (b removed) no longer.
          yield* sql`UPDATE handoffs SET tags = ARRAY['only-b'] WHERE seq = ${seqOf(b!)}`
          yield* check
          yield* sql`DELETE FROM handoff_sales WHERE handoff_seq = ${seqOf(b!)}`
          yield* sql`DELETE FROM handoffs WHERE seq = ${seqOf(b!)}`
          yield* check
        }))

      // Two transactions at once, one waiting on the other's lock: PostgreSQL only (whileHeld says why).
      it.effect.skipIf(backend.name === "pglite")(
        "a sale and a tag edit of the same handoff at once count the sale under the tags the handoff ends with",
        () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const filer = DeskId.make(newAgentId())
            const seqOf = (id: string) => Number(id.replace("DESK-", ""))
            // A desk-receipt sale to a new buyer as the desk records one (migration 0013's desk_unlock), in SQL: the
            // first runs inside a transaction the test holds open, where the ledger's reads would ask the pool for
            // a connection of their own.
            const unlock = (id: string) =>
              sql`SELECT desk_unlock(h.price_micro, ROW(${newAgentId()}, h.seq, ${newAgentId()}, h.filer_did,
                  h.price_micro, h.price_micro * 9 / 10, h.price_micro - h.price_micro * 9 / 10, 'sale', 'desk', 'base',
                  NULL, NULL, NULL, NULL, NULL, 'ledger', NULL, true, NULL, NULL)::new_receipt) ->> 'outcome' AS outcome
                FROM handoffs h WHERE h.seq = ${seqOf(id)}`.pipe(
                Effect.map(([row]) => expect(row).toEqual({ outcome: "recorded" }))
              )
            const edit = (id: string, tags: ReadonlyArray<string>) =>
              sql`UPDATE handoffs SET tags = ${tags}::text[] WHERE seq = ${seqOf(id)}`
            const [first, second] = yield* Effect.all([fileAs(filer, 200), fileAs(filer, 201)])
            yield* unlock(first!)
            yield* unlock(second!)

            // `later` on a connection of its own, begun once `first` is done inside a transaction that stays open
            // until `later` waits for a lock.
            const meanwhile = <A, B>(first: Effect.Effect<A, unknown>, later: Effect.Effect<B, unknown>) =>
              whileHeld(first, [later], { waiters: 1 })

            // The sale first, its transaction still open while the edit begins.
            yield* meanwhile(unlock(first!), edit(first!, ["moved-after-sale"]))
            expect(yield* kept).toEqual(yield* scanned)

            // The edit first, its transaction still open while the sale begins.
            yield* meanwhile(edit(second!, ["moved-before-sale"]), unlock(second!))
            const reference = yield* scanned
            expect(reference.tags).toEqual(
              expect.arrayContaining([
                expect.objectContaining({ tag: "moved-after-sale", unlocks: 2 }),
                expect.objectContaining({ tag: "moved-before-sale", unlocks: 2 })
              ])
            )
            expect(yield* kept).toEqual(reference)
          })
      )

      it.effect("folding keeps the tally tables a few pages, however many deltas it folds", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const before = yield* kept
          const size = (table: string) =>
            Effect.map(
              sql<{ bytes: number }>`SELECT pg_relation_size(${table})::int AS bytes`,
              (rows) => rows[0]!.bytes
            )
          // 12,000 deltas in 40 folds: without a vacuum after each, their dead rows would take about 1.5 MB each.
          for (let round = 0; round < 40; round++) {
            yield* sql`INSERT INTO books_tally (receipts) SELECT 0 FROM generate_series(1, 300)`
            yield* sql`INSERT INTO tag_tally (tag, packets, unlocks, reconstruct_micro)
              SELECT 'zig', 0, 0, 0 FROM generate_series(1, 300)`
            yield* foldTallies(256)
          }
          expect(yield* size("books_tally")).toBeLessThan(128 * 1024)
          expect(yield* size("tag_tally")).toBeLessThan(128 * 1024)
          expect(yield* kept).toEqual(before)
        }))

      it.effect("the migration's backfill recomputes the same counters from the tables", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const before = yield* kept
          yield* sql`DELETE FROM books_tally`
          yield* sql`DELETE FROM tag_tally`
          yield* sql`DELETE FROM buyer_tally`
          yield* sql`DELETE FROM filer_tally`
          yield* Effect.orDie(backfill)
          expect(yield* kept).toEqual(before)
          expect(yield* kept).toEqual(yield* scanned)
        }))

      it.effect("0020's mend brings a buyer's and a filer's counts, and the books' with them, back to the rows", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const before = yield* scanned
          // What lost increments (and worse) could have left: counts short and long, a row missing, one too many.
          const [buyer] = yield* sql<{ payer: string }>`SELECT payer FROM buyer_tally ORDER BY payer LIMIT 1`
          const [filer] = yield* sql<
            { filer_did: string }
          >`SELECT filer_did FROM filer_tally ORDER BY filer_did LIMIT 1`
          yield* sql`UPDATE buyer_tally SET sales = sales + 5 WHERE payer = ${buyer!.payer}`
          yield* sql`DELETE FROM filer_tally WHERE filer_did = ${filer!.filer_did}`
          yield* sql`INSERT INTO buyer_tally (payer, sales) VALUES (${newAgentId()}, 2)`
          yield* sql`INSERT INTO books_tally (buyers, filers) VALUES (3, -2)`
          expect(yield* kept).not.toEqual(before)
          yield* Effect.orDie(mendCounts)
          expect(yield* kept).toEqual(before)
        }))

      it.effect("TRUNCATE of a counted table is refused, with the way to empty it, and changes nothing", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const before = yield* scanned
          expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM receipts`)[0]!.n).toBeGreaterThan(0)
          for (const table of COUNTED_TABLES) {
            const refused = yield* Effect.flip(sql.unsafe(`TRUNCATE ${table} CASCADE`))
            expect(String(refused.cause)).toContain(`TRUNCATE ${table} is refused`)
          }
          expect(yield* scanned).toEqual(before)
          expect(yield* kept).toEqual(before)
        }))

      it.effect("a write that leaves every counted column of a receipt as it was writes no tally row", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const rows = sql<{ books: number; deltas: number }>`SELECT (SELECT count(*) FROM books_tally)::int AS books,
            (SELECT count(*) FROM receipt_agent_delta)::int AS deltas`
          const [before] = yield* rows
          // The payout worker writes its status again (storeSigned: pending to pending), and a column nothing counts.
          yield* sql`UPDATE receipts SET payout_status = payout_status, payout_address = payout_address`
          expect((yield* rows)[0]).toEqual(before)
          expect(yield* kept).toEqual(yield* scanned)
        }))
    })
  })
}
