import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { DbInt } from "../Domain/DbTypes.ts"
import { pageWithOnePast } from "../Domain/Paging.ts"
import { RECEIPTS_COUNTED_UP_TO } from "../Domain/ReceiptQuery.ts"
import { plannedRows } from "../PlannedRows.ts"
import { ReceiptRow } from "./ReceiptRow.ts"

export interface ReceiptFilter {
  readonly payer: string | null
  readonly filer: string | null
  readonly limit: number
  readonly offset: number
}

/** The columns of a receipt as listed, `r` the receipt and `h` its handoff. */
export const RECEIPT_COLUMNS = `r.receipt_id, r.handoff_seq, h.title, r.payer, r.filer_did, r.price_micro,
  r.filer_micro, r.desk_micro, r.kind, r.mode, r.network, r.payment_tx_hash, r.payment_payer_address,
  r.payout_status, r.payout_address, r.payout_tx_hash, r.created_at`

const where = (sql: SqlClient.SqlClient, filter: ReceiptFilter) => {
  const clauses = [sql`TRUE`]
  if (filter.payer !== null) clauses.push(sql`r.payer = ${filter.payer}`)
  if (filter.filer !== null) clauses.push(sql`r.filer_did = ${filter.filer}`)
  return sql.and(clauses)
}

/**
 * One page of receipts, newest first, with its total. The page is taken from the receipts alone and only its
 * rows are joined to their handoffs (joined first, a page 10,000 receipts deep read 10,000 handoffs: 49 ms
 * against 5 at a million). One receipt past the page is read, so a following page is never hidden by an
 * estimate that is too low.
 */
export const listReceipts = (
  sql: SqlClient.SqlClient,
  filter: ReceiptFilter,
  countedUpTo: number = RECEIPTS_COUNTED_UP_TO
) =>
  Effect.gen(function*() {
    const matching = sql`FROM receipts r WHERE ${where(sql, filter)}`
    const [rows, counted] = yield* Effect.all([
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: ReceiptRow,
        execute: () =>
          sql`SELECT ${sql.literal(RECEIPT_COLUMNS)} FROM (
              SELECT r.* ${matching} ORDER BY r.seq DESC LIMIT ${filter.limit + 1} OFFSET ${filter.offset}
            ) r JOIN handoffs h ON h.seq = r.handoff_seq ORDER BY r.seq DESC`
      })(undefined),
      SqlSchema.single({
        Request: Schema.Void,
        Result: Schema.Struct({ total: DbInt }),
        execute: () => sql`SELECT count(*) AS total FROM (SELECT 1 ${matching} LIMIT ${countedUpTo + 1}) counted`
      })(undefined)
    ])
    const total = counted.total <= countedUpTo
      ? counted.total
      : Math.max(counted.total, yield* plannedRows(sql, matching))
    return pageWithOnePast(rows, filter, total)
  })
