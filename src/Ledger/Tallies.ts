import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Layer, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"

/** Deltas left unfolded before a pass folds them: reads sum at most about this many rows more per table. */
const FOLD_ABOVE = 256

const Pending = Schema.Struct({ books: DbInt, tags: DbInt, agents: DbInt })

/**
 * Folds the deltas of books_tally and tag_tally (migration 0011) into one row per table and tag, and those of
 * receipt_agent_delta (0017) into agent_days, filer_payouts and handoff_earnings. Each fold is one statement: the
 * rows it deletes are exactly the rows it sums, so a read, a write or another desk's fold at the same moment sees
 * the counters either before or after it, never half.
 * A fold leaves its deltas behind as dead rows, which every read of the counters would scan until a vacuum: the
 * table folded is vacuumed right after (a few pages; skipped while another desk vacuums it). Autovacuum would
 * come a minute later at best, and never where it is off: a bench database, 100,000 dead rows, showed /api/books
 * at 40 ms a read instead of well under one.
 */
export const foldTallies = (above: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [pending] = yield* sql`SELECT (SELECT count(*) FROM books_tally) AS books,
    (SELECT count(*) FROM tag_tally) AS tags, (SELECT count(*) FROM receipt_agent_delta) AS agents`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Pending)))
    )
    if (pending !== undefined && pending.books > above) {
      yield* sql`WITH gone AS (DELETE FROM books_tally RETURNING *)
      INSERT INTO books_tally SELECT sum(receipts), sum(volume_micro), sum(filer_micro), sum(desk_micro),
        sum(on_chain_micro), sum(ledger_only_micro), sum(filer_paid_on_chain_micro), sum(on_chain_payouts),
        sum(filer_owed_micro), sum(filer_ledger_micro), sum(buyers), sum(handoffs), sum(filers), sum(purchases)
      FROM gone HAVING count(*) > 0`
      yield* sql`VACUUM (SKIP_LOCKED) books_tally`
    }
    if (pending !== undefined && pending.tags > above) {
      yield* sql`WITH gone AS (DELETE FROM tag_tally RETURNING *)
      INSERT INTO tag_tally SELECT tag, sum(packets), sum(unlocks), sum(reconstruct_micro)
      FROM gone GROUP BY tag HAVING sum(packets) <> 0 OR sum(unlocks) <> 0 OR sum(reconstruct_micro) <> 0`
      yield* sql`VACUUM (SKIP_LOCKED) tag_tally`
    }
    if (pending !== undefined && pending.agents > above) {
      yield* foldAgentDeltas(sql)
      yield* sql`VACUUM (SKIP_LOCKED) receipt_agent_delta`
    }
  }).pipe(Effect.orDie)

/**
 * receipt_agent_delta into agent_days, filer_payouts and handoff_earnings. Desks folding at once delete disjoint
 * deltas but may add to the same rows: each adds in key order, so two of them never wait on each other's rows
 * crosswise (a deadlock). The rows added to are updated in place (no key changes), which PostgreSQL prunes as it
 * goes: 200 folds into one filer's rows left the tables' sizes as they were.
 */
const foldAgentDeltas = (sql: SqlClient.SqlClient) =>
  sql`WITH gone AS (DELETE FROM receipt_agent_delta RETURNING *),
    days AS (
      INSERT INTO agent_days AS a (agent_did, day, sales, spent_micro, earned_micro, receipts)
      SELECT agent_did, day, sum(sales), sum(spent_micro), sum(earned_micro), sum(receipts) FROM (
        SELECT payer AS agent_did, day, CASE WHEN kind = 'sale' THEN sign ELSE 0 END AS sales,
          CASE WHEN kind = 'sale' THEN sign * price_micro ELSE 0 END AS spent_micro, 0 AS earned_micro, sign AS receipts
        FROM gone
        UNION ALL
        SELECT filer_did, day, sign, 0, sign * filer_micro, 0 FROM gone WHERE kind = 'sale'
      ) AS sides GROUP BY agent_did, day ORDER BY agent_did, day
      ON CONFLICT (agent_did, day) DO UPDATE SET sales = a.sales + excluded.sales,
        spent_micro = a.spent_micro + excluded.spent_micro, earned_micro = a.earned_micro + excluded.earned_micro,
        receipts = a.receipts + excluded.receipts
    ),
    payouts AS (
      INSERT INTO filer_payouts AS f (filer_did, payout_status, sales, filer_micro)
      SELECT filer_did, payout_status, sum(sign), sum(sign * filer_micro) FROM gone WHERE kind = 'sale'
      GROUP BY filer_did, payout_status ORDER BY filer_did, payout_status
      ON CONFLICT (filer_did, payout_status) DO UPDATE SET sales = f.sales + excluded.sales,
        filer_micro = f.filer_micro + excluded.filer_micro
    )
    INSERT INTO handoff_earnings AS e (handoff_seq, sales, filer_micro)
    SELECT handoff_seq, sum(sign), sum(sign * filer_micro) FROM gone WHERE kind = 'sale'
    GROUP BY handoff_seq ORDER BY handoff_seq
    ON CONFLICT (handoff_seq) DO UPDATE SET sales = e.sales + excluded.sales,
      filer_micro = e.filer_micro + excluded.filer_micro`

/** Folds the tallies every second for as long as the desk runs; several desks on one database may all do it. */
export const TallyFoldingLive = Layer.scopedDiscard(
  foldTallies(FOLD_ABOVE).pipe(
    Effect.catchAllCause((cause) => Effect.logError("folding the kept counters failed", Cause.pretty(cause))),
    Effect.zipRight(Effect.sleep(Duration.seconds(1))),
    Effect.forever,
    Effect.forkScoped
  )
)

/** How many handoffs, not the demo, `filer` has filed: its kept row of filer_tally (migration 0011), one lookup. */
export const filedBy = (sql: SqlClient.SqlClient, filer: string) =>
  sql`coalesce((SELECT handoffs FROM filer_tally WHERE filer_did = ${filer}), 0)`

/** How many sales `payer` has bought: its kept row of buyer_tally (migration 0011), one lookup. */
export const boughtBy = (sql: SqlClient.SqlClient, payer: string) =>
  sql`coalesce((SELECT sales FROM buyer_tally WHERE payer = ${payer}), 0)`

/** How many receipts of every kind `payer` holds: its rows of agent_days (migration 0017) and its unfolded deltas. */
export const heldBy = (sql: SqlClient.SqlClient, payer: string) =>
  sql`(SELECT coalesce(sum(receipts), 0) FROM (
    SELECT receipts FROM agent_days WHERE agent_did = ${payer}
    UNION ALL SELECT sign FROM receipt_agent_delta WHERE payer = ${payer}) AS held)`

/**
 * `filer`'s sales by payout status (payout_status, sales, filer_micro), one row for each status it has sales in:
 * its rows of filer_payouts (migration 0017) and its unfolded deltas, as a FROM item.
 */
export const earningsOf = (sql: SqlClient.SqlClient, filer: string) =>
  sql`(SELECT payout_status, sum(sales) AS sales, sum(filer_micro) AS filer_micro FROM (
    SELECT payout_status, sales, filer_micro FROM filer_payouts WHERE filer_did = ${filer}
    UNION ALL SELECT payout_status, sign, sign * filer_micro FROM receipt_agent_delta
      WHERE filer_did = ${filer} AND kind = 'sale'
  ) AS kept GROUP BY payout_status HAVING sum(sales) <> 0)`

/**
 * `agent`'s sales by UTC day (day, spent_micro on its purchases, earned_micro from its filings), one row for each
 * day it bought or sold on: its rows of agent_days (migration 0017) and its unfolded deltas, as a FROM item.
 */
export const daysOf = (sql: SqlClient.SqlClient, agent: string) =>
  sql`(SELECT day, sum(spent_micro) AS spent_micro, sum(earned_micro) AS earned_micro FROM (
    SELECT day, sales, spent_micro, earned_micro FROM agent_days WHERE agent_did = ${agent}
    UNION ALL SELECT day, sign, sign * price_micro, 0 FROM receipt_agent_delta WHERE payer = ${agent} AND kind = 'sale'
    UNION ALL SELECT day, sign, 0, sign * filer_micro FROM receipt_agent_delta
      WHERE filer_did = ${agent} AND kind = 'sale'
  ) AS kept GROUP BY day HAVING sum(sales) <> 0)`

/**
 * The sales and the filer's earnings (sales, filer_micro) of the handoff whose seq the outer query's `h.seq` is:
 * its row of handoff_earnings (migration 0017) and its unfolded deltas, as a LATERAL item.
 */
export const earnedOnListed = (sql: SqlClient.SqlClient) =>
  sql`LATERAL (SELECT coalesce(sum(sales), 0) AS sales, coalesce(sum(filer_micro), 0) AS filer_micro FROM (
    SELECT sales, filer_micro FROM handoff_earnings WHERE handoff_seq = h.seq
    UNION ALL SELECT sign, sign * filer_micro FROM receipt_agent_delta WHERE handoff_seq = h.seq AND kind = 'sale'
  ) AS kept)`
