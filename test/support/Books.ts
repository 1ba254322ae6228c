import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Each way the desk's rows can disagree with each other, as a query listing the offending rows. Written for
 * desks that sell by desk receipt (no x402 settlement in flight) and take no POST /api/agents.
 */
const checks = (sql: SqlClient.SqlClient) => ({
  "a handoff whose purchases differ from its receipts": sql`
    SELECT h.seq FROM handoffs h LEFT JOIN handoff_sales s ON s.handoff_seq = h.seq
    LEFT JOIN (SELECT handoff_seq, count(*) AS n FROM receipts WHERE kind <> 'self' GROUP BY handoff_seq) r
      ON r.handoff_seq = h.seq
    WHERE s.sales IS DISTINCT FROM coalesce(r.n, 0)`,
  "an agent whose spend differs from its receipts": sql`
    SELECT a.id FROM agents a
    LEFT JOIN (SELECT payer, sum(price_micro) AS spent FROM receipts WHERE kind = 'sale' GROUP BY payer) r
      ON r.payer = a.id
    WHERE a.spent_micro <> coalesce(r.spent, 0)`,
  "a receipt that does not match its handoff": sql`
    SELECT r.receipt_id FROM receipts r JOIN handoffs h ON h.seq = r.handoff_seq
    WHERE r.price_micro <> h.price_micro OR r.filer_did <> h.filer_did`,
  "a receipt that exists twice": sql`
    SELECT payer, handoff_seq FROM receipts GROUP BY payer, handoff_seq HAVING count(*) > 1`,
  "a filing that exists twice": sql`
    SELECT title FROM handoffs WHERE NOT is_demo GROUP BY title, filer_did HAVING count(*) > 1`,
  "a filed handoff without its filer's agent row": sql`
    SELECT h.seq FROM handoffs h
    WHERE h.origin = 'filed' AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = h.filer_did)`,
  "a handoff whose hash or length is not its body's": sql`
    SELECT seq FROM handoffs
    WHERE hash <> encode(sha256(convert_to(body, 'UTF8')), 'hex') OR body_chars <> char_length(body)`,
  "an agent with neither a filing nor a receipt": sql`
    SELECT a.id FROM agents a
    WHERE NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.filer_did = a.id)
      AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.payer = a.id)`
})

/** The checks that found rows, with those rows; `{}` when the books hold. */
export const bookViolations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const found: Record<string, ReadonlyArray<unknown>> = {}
  for (const [name, query] of Object.entries(checks(sql))) {
    const rows = yield* query
    if (rows.length > 0) found[name] = rows
  }
  return found
}).pipe(Effect.orDie)

export const rowCount = (table: "handoffs" | "receipts" | "agents") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*)::int AS n FROM ${sql(table)}`).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )
