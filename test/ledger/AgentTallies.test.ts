import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { DeskId } from "../../src/Domain/Ids.ts"
import { AgentRepo } from "../../src/Identity/AgentRepo.ts"
import { Ledger } from "../../src/Ledger.ts"
import { foldTallies } from "../../src/Ledger/Tallies.ts"
import { backfillAgentTallies } from "../../src/Migrations/0017_agent_tallies.ts"
import { OwnerRepo } from "../../src/Owner/OwnerRepo.ts"
import { filedAs } from "../support/Filed.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

/**
 * An agent's figures as its pages computed them over its receipts before the counters were kept (migration 0017):
 * the reference the kept counters must equal.
 */
const scanned = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const earnings = yield* sql`SELECT payout_status, count(*)::int AS sales,
        coalesce(sum(filer_micro), 0)::int AS filer_micro
      FROM receipts WHERE filer_did = ${id} AND kind = 'sale' GROUP BY payout_status ORDER BY payout_status`
    const days = yield* sql`SELECT day, sum(spent_micro)::int AS spent_micro, sum(earned_micro)::int AS earned_micro
      FROM (
        SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, price_micro AS spent_micro,
          0 AS earned_micro
        FROM receipts WHERE payer = ${id} AND kind = 'sale'
        UNION ALL
        SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), 0, filer_micro
        FROM receipts WHERE filer_did = ${id} AND kind = 'sale'
      ) AS activity GROUP BY day ORDER BY day`
    const [counts] = yield* sql`SELECT (SELECT count(*)::int FROM receipts WHERE payer = ${id}) AS purchases,
        (SELECT coalesce(sum(filer_micro), 0)::int FROM receipts WHERE filer_did = ${id} AND kind = 'sale') AS earned,
        (SELECT coalesce(sum(filer_micro), 0)::int FROM receipts
          WHERE filer_did = ${id} AND kind = 'sale' AND payout_status = 'sent') AS earned_on_chain,
        (SELECT count(*)::int FROM receipts WHERE filer_did = ${id} AND kind = 'sale') AS sales`
    const filings = yield* sql`SELECT h.seq::int AS seq,
        (SELECT count(*)::int FROM receipts r WHERE r.handoff_seq = h.seq AND r.kind = 'sale') AS sales,
        (SELECT coalesce(sum(r.filer_micro), 0)::int FROM receipts r WHERE r.handoff_seq = h.seq AND r.kind = 'sale')
          AS earned_micro
      FROM handoffs h WHERE h.filer_did = ${id} AND NOT h.is_demo ORDER BY h.seq DESC`
    return { earnings, days, counts, filings }
  }).pipe(Effect.orDie)

/** The same figures as the agent's pages now read them. */
const kept = (id: string) =>
  Effect.gen(function*() {
    const owner = yield* OwnerRepo
    const agents = yield* AgentRepo
    const [filings, earnings, days, totals, stats] = yield* Effect.all([
      owner.filings(id),
      owner.earnings(id),
      owner.days(id),
      owner.totals(id),
      agents.stats(id)
    ])
    return {
      earnings: [...earnings].sort((a, b) => a.payout_status.localeCompare(b.payout_status)),
      days: [...days],
      counts: {
        purchases: totals.purchases,
        earned: stats.earned_micro,
        earned_on_chain: stats.earned_on_chain_micro,
        sales: stats.sales
      },
      filings: filings.map(({ earned_micro, sales, seq }) => ({ seq, sales, earned_micro }))
    }
  }).pipe(Effect.provide([OwnerRepo.layer, AgentRepo.layer]))

const everyAgent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<
    { readonly id: string }
  >`SELECT payer AS id FROM receipts UNION SELECT filer_did FROM receipts`
  return rows.map((_) => _.id)
}).pipe(Effect.orDie)

/** Every agent on a receipt (and `also`) reads the same kept as scanned. */
const expectAllEqual = (also: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const ids = [...new Set([...(yield* everyAgent), ...also])]
    expect(ids.length).toBeGreaterThan(0)
    for (const id of ids) expect({ id, ...(yield* kept(id)) }).toEqual({ id, ...(yield* scanned(id)) })
  })

const fileAs = (filer: DeskId, i: number) =>
  filedAs(filer, {
    title: `Agent tally filing ${i} ${newAgentId().slice(-8)}`,
    priceUsd: 0.01 * (1 + (i % 5)),
    tags: ["postgresql"]
  })

const seqOf = (id: string) => Number(id.replace("DESK-", ""))

for (const backend of backends) {
  describe.skipIf(!backend.available)(`an agent's kept counters over ${backend.name}`, () => {
    it.layer(servicesOn(backend.layer), { timeout: 180_000 })((it) => {
      it.effect("concurrent unlocks and folds leave every agent's figures equal to the scans", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const filers = Array.from({ length: 3 }, () => DeskId.make(newAgentId()))
          const ids = yield* Effect.all(
            Array.from({ length: 12 }, (_, i) => fileAs(filers[i % filers.length]!, i)),
            { concurrency: 4 }
          )
          // A filer buys other filers' handoffs too: one agent on both sides of the books.
          const buyers = [...Array.from({ length: 5 }, () => DeskId.make(newAgentId())), filers[1]!]
          const unlocks = buyers.flatMap((buyer, b) =>
            ids.filter((_, i) => (i + b) % 2 === 0).map((id) =>
              Effect.ignore(ledger.unlock(buyer, id, buyer, Option.none()))
            )
          )
          // Its own handoff: a self receipt, held but neither spent nor earned.
          const own = Effect.ignore(ledger.unlock(filers[0]!, ids[0]!, filers[0]!, Option.none()))
          const folds = Array.from({ length: 6 }, () => foldTallies(1))
          yield* Effect.all([...unlocks, own, ...folds], { concurrency: 12 })
          const sql = yield* SqlClient.SqlClient
          const sold = yield* sql<{ sales: number }>`SELECT count(*)::int AS sales FROM receipts
            WHERE kind = 'sale' AND payer = ANY(${buyers})`
          expect(sold[0]!.sales).toBeGreaterThan(20)
          yield* expectAllEqual(filers)
          // A sale after the last fold: read from its deltas, then from the rows they are folded into.
          const late = DeskId.make(newAgentId())
          yield* ledger.unlock(late, ids[1]!, late, Option.none())
          const pending = yield* sql<{ rows: number }>`SELECT count(*)::int AS rows FROM receipt_agent_delta`
          expect(pending[0]!.rows).toBeGreaterThan(0)
          yield* expectAllEqual(filers)
          yield* foldTallies(0)
          yield* expectAllEqual(filers)
          // Nothing left unfolded: the figures come from the folded rows alone.
          const left = yield* sql<{ rows: number }>`SELECT count(*)::int AS rows FROM receipt_agent_delta`
          expect(left[0]!.rows).toBe(0)
        }))

      it.effect("payout moves, a receipt moved to another day or filer, and removed receipts are counted back out", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const ledger = yield* Ledger
          const [filer, other] = [DeskId.make(newAgentId()), DeskId.make(newAgentId())]
          const [a, b] = yield* Effect.all([fileAs(filer, 1), fileAs(filer, 2)])
          const buyer = DeskId.make(newAgentId())
          const receipt = yield* ledger.unlock(buyer, a!, buyer, Option.none())
          yield* ledger.unlock(buyer, b!, buyer, Option.none())
          const receiptId = receipt.response.receipt.receiptId
          const check = Effect.zipRight(foldTallies(3), expectAllEqual([filer, other, buyer]))
          yield* check
          for (const status of ["owed", "pending", "sent"]) {
            yield* sql`UPDATE receipts SET mode = 'x402', payout_status = ${status} WHERE receipt_id = ${receiptId}`
            yield* check
          }
          yield* sql`UPDATE receipts SET created_at = created_at - interval '3 days' WHERE receipt_id = ${receiptId}`
          yield* check
          yield* sql`UPDATE receipts SET filer_did = ${other} WHERE receipt_id = ${receiptId}`
          yield* check
          yield* sql`UPDATE receipts SET kind = 'self', filer_micro = 0, desk_micro = price_micro,
            payout_status = 'zero' WHERE handoff_seq = ${seqOf(b!)}`
          yield* check
          yield* sql`DELETE FROM receipts WHERE receipt_id = ${receiptId}`
          yield* check
        }))

      it.effect("the migration's backfill recomputes the same counters from the receipts", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* expectAllEqual()
          yield* sql`DELETE FROM agent_days`
          yield* sql`DELETE FROM filer_payouts`
          yield* sql`DELETE FROM handoff_earnings`
          yield* sql`DELETE FROM receipt_agent_delta`
          yield* Effect.orDie(backfillAgentTallies)
          yield* expectAllEqual()
        }))
    })
  })
}
