import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema, Struct } from "effect"
import { DbDate, DbInt, DbSum } from "../Domain/DbTypes.ts"
import { ReceiptRow } from "../Ledger/ReceiptRow.ts"
import { boughtBy, daysOf, earnedOnListed, earningsOf, filedBy, heldBy } from "../Ledger/Tallies.ts"

/** How many filings and purchases the page lists, newest first; the totals count them all. */
export const LISTED = 50
/** The chart covers at most this many days of activity, the latest. */
export const CHART_DAYS = 366

const AgentRow = Schema.Struct({
  id: Schema.String,
  payout_address: Schema.NullOr(Schema.String),
  spend_cap_micro: DbInt,
  spent_micro: DbInt,
  created_at: DbDate
})

export const FilingRow = Schema.Struct({
  seq: DbInt,
  title: Schema.String,
  price_micro: DbInt,
  filed_at: DbDate,
  sales: DbInt,
  earned_micro: DbSum
})
export type FilingRow = typeof FilingRow.Type

/** A receipt the agent holds, with the filer's public handle. */
export const PurchaseRow = Schema.Struct({
  ...Struct.pick(
    ReceiptRow.fields,
    "receipt_id",
    "handoff_seq",
    "title",
    "filer_did",
    "price_micro",
    "kind",
    "mode",
    "created_at"
  ),
  filer: Schema.String
})
export type PurchaseRow = typeof PurchaseRow.Type

/** The agent's sales by payout status: what reached its wallet, what is owed, what stays on the ledger. */
const EarningRow = Schema.Struct({ payout_status: Schema.String, sales: DbInt, filer_micro: DbSum })

export const DayRow = Schema.Struct({ day: Schema.String, spent_micro: DbSum, earned_micro: DbSum })
export type DayRow = typeof DayRow.Type

const Totals = Schema.Struct({ filings: DbInt, purchases: DbInt, bought: DbInt })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const agent = SqlSchema.findOne({
    Request: Schema.String,
    Result: AgentRow,
    execute: (id) =>
      sql`SELECT id, payout_address, spend_cap_micro, spent_micro, created_at FROM agents WHERE id = ${id}`
  })

  const filings = SqlSchema.findAll({
    Request: Schema.String,
    Result: FilingRow,
    execute: (id) =>
      sql`SELECT h.seq, h.title, h.price_micro, h.filed_at, earned.sales, earned.filer_micro AS earned_micro
        FROM handoffs h, ${earnedOnListed(sql)} AS earned
        WHERE h.filer_did = ${id} AND NOT h.is_demo ORDER BY h.seq DESC LIMIT ${LISTED}`
  })

  const purchases = SqlSchema.findAll({
    Request: Schema.String,
    Result: PurchaseRow,
    execute: (id) =>
      sql`SELECT r.receipt_id, r.handoff_seq, h.title, h.filer, r.filer_did, r.price_micro, r.kind, r.mode, r.created_at
        FROM receipts r JOIN handoffs h ON h.seq = r.handoff_seq
        WHERE r.payer = ${id} ORDER BY r.seq DESC LIMIT ${LISTED}`
  })

  const earnings = SqlSchema.findAll({
    Request: Schema.String,
    Result: EarningRow,
    execute: (id) => sql`SELECT payout_status, sales, filer_micro FROM ${earningsOf(sql, id)} AS earnings`
  })

  /** Per UTC day: what the agent spent on sales it bought and earned from sales of its filings. */
  const days = SqlSchema.findAll({
    Request: Schema.String,
    Result: DayRow,
    execute: (id) =>
      sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, spent_micro, earned_micro FROM ${daysOf(sql, id)} AS days
        ORDER BY days.day DESC LIMIT ${CHART_DAYS}`
  })

  const totals = SqlSchema.single({
    Request: Schema.String,
    Result: Totals,
    execute: (id) =>
      sql`SELECT
          ${filedBy(sql, id)} AS filings,
          ${heldBy(sql, id)} AS purchases,
          ${boughtBy(sql, id)} AS bought`
  })

  return {
    agent: (id: string) => Effect.orDie(agent(id)),
    filings: (id: string) => Effect.orDie(filings(id)),
    purchases: (id: string) => Effect.orDie(purchases(id)),
    earnings: (id: string) => Effect.orDie(earnings(id)),
    days: (id: string) => Effect.orDie(Effect.map(days(id), (rows) => [...rows].reverse())),
    totals: (id: string) => Effect.orDie(totals(id))
  } as const
})

export class OwnerRepo extends Context.Tag("OwnerRepo")<OwnerRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(OwnerRepo, make)
}
