import { Migrator, SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { migrations } from "../../src/Migrations/index.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const TABLE = "desk_migrations"
const before0027 = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0027"))

/** What the counts must be: each handoff's sales from its receipts, and the books' and tags' sums of them. */
const scanned = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sales = yield* sql<{ seq: number; sales: number }>`SELECT h.seq::int AS seq, count(r.seq)::int AS sales
    FROM handoffs h LEFT JOIN receipts r ON r.handoff_seq = h.seq AND r.kind <> 'self' GROUP BY h.seq ORDER BY 1`
  const [books] = yield* sql<{ purchases: number }>`SELECT count(r.seq)::int AS purchases
    FROM receipts r JOIN handoffs h ON h.seq = r.handoff_seq WHERE r.kind <> 'self' AND NOT h.is_demo`
  const tags = yield* sql<{ tag: string; unlocks: number }>`SELECT tag, count(*)::int AS unlocks
    FROM receipts r JOIN handoffs h ON h.seq = r.handoff_seq, unnest(h.tags) AS tag
    WHERE r.kind <> 'self' AND NOT h.is_demo GROUP BY tag ORDER BY tag`
  return { sales, books: books!.purchases, tags }
}).pipe(Effect.orDie)

/** The counts as kept: handoff_sales, the books' purchases, the tags' unlocks. */
const kept = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sales = yield* sql<{ seq: number; sales: number }>`SELECT h.seq::int AS seq, s.sales::int AS sales
    FROM handoffs h LEFT JOIN handoff_sales s ON s.handoff_seq = h.seq ORDER BY 1`
  const [books] = yield* sql<{ purchases: number }>`SELECT coalesce(sum(purchases), 0)::int AS purchases
    FROM books_tally`
  const tags = yield* sql<{ tag: string; unlocks: number }>`SELECT tag, sum(unlocks)::int AS unlocks
    FROM tag_tally GROUP BY tag HAVING sum(unlocks) <> 0 ORDER BY tag`
  return { sales, books: books!.purchases, tags }
}).pipe(Effect.orDie)

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`sale counts kept apart (migration 0027) over ${backend.name}`, () => {
    it.effect(
      "a database with sales keeps every count through the migration, and counts the sales after it",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* Migrator.make({})({ loader: Migrator.fromRecord(before0027), table: TABLE })
          const insert = (tags: ReadonlyArray<string>, isDemo = false) =>
            sql<{ seq: string | number }>`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro,
              reconstruct_micro, origin, is_demo, hash, body_chars, tags)
            VALUES ('t', 't', ${newAgentId()}, 'f', ${newAgentId()}, 10000, 20000, 'filed', ${isDemo}, 'h', 1,
              ${tags}::text[]) RETURNING seq`.pipe(Effect.map((rows) => Number(rows[0]!.seq)))
          // A desk-receipt sale to a new buyer, through the database's own desk_unlock of the moment.
          const sell = (seq: number, kind = "sale") =>
            sql<{ outcome: string }>`SELECT desk_unlock(h.price_micro, ROW(${newAgentId()}, h.seq, ${newAgentId()},
              h.filer_did, h.price_micro, ${kind === "sale" ? 9000 : 0}, ${kind === "sale" ? 1000 : 10000}, ${kind},
              'desk', 'base', NULL, NULL, NULL, NULL, NULL, ${kind === "sale" ? "ledger" : "zero"}, NULL,
              ${kind === "sale"}, NULL, NULL)::new_receipt) ->> 'outcome' AS outcome
            FROM handoffs h WHERE h.seq = ${seq}`.pipe(
              Effect.map((rows) => expect(rows[0]!.outcome).toBe("recorded"))
            )
          const [a, b, c] = [yield* insert(["alpha", "beta"]), yield* insert(["beta"]), yield* insert(["gamma"])]
          const demo = yield* insert([], true)
          for (const seq of [a, a, a, b, c, demo]) yield* sell(seq)
          yield* sell(b, "self")
          const before = yield* scanned
          expect(before.books).toBe(5)
          expect(yield* kept).toEqual(before)

          yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: TABLE })
          const [column] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.columns
          WHERE table_name = 'handoffs' AND column_name = 'purchases'`
          expect(column!.n).toBe(0)
          expect(yield* kept).toEqual(before)

          // After it: a sale, a new handoff (its count starts at 0), a tag edit, and a handoff removed.
          yield* sell(c)
          const d = yield* insert(["alpha", "delta"])
          yield* sell(d)
          yield* sql`UPDATE handoffs SET tags = ARRAY['epsilon'] WHERE seq = ${a}`
          expect(yield* kept).toEqual(yield* scanned)
          yield* sql`DELETE FROM receipts WHERE handoff_seq = ${b}`
          yield* sql`DELETE FROM handoff_sales WHERE handoff_seq = ${b}`
          yield* sql`DELETE FROM handoffs WHERE seq = ${b}`
          const after = yield* scanned
          expect(after.books).toBe(6)
          expect(yield* kept).toEqual(after)
        }).pipe(Effect.provide(backend.layer), Effect.scoped),
      { timeout: 120_000 }
    )
  })
}
