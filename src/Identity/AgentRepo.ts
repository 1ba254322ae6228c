import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { DbDate, DbInt, DbSum } from "../Domain/DbTypes.ts"
import { boughtBy, earningsOf, filedBy } from "../Ledger/Tallies.ts"

export const AgentRow = Schema.Struct({
  id: Schema.String,
  payout_address: Schema.NullOr(Schema.String),
  payout_signed_at: Schema.NullOr(DbDate),
  spend_cap_micro: DbInt,
  spent_micro: DbInt,
  require_sign_in: Schema.Boolean,
  created_at: DbDate
})
export type AgentRow = typeof AgentRow.Type

/** What an agent sets through POST /api/agents; `payoutSignedAt` is the signed time of the last address change. */
export interface AgentSettings {
  readonly payoutAddress: string | null
  readonly payoutSignedAt: Date | null
  readonly capMicro: number
  readonly requireSignIn: boolean
}

const AgentStats = Schema.Struct({
  earned_micro: DbSum,
  earned_on_chain_micro: DbSum,
  filed: DbInt,
  sales: DbInt,
  purchases: DbInt
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const ensure = (id: string) => sql`INSERT INTO agents (id) VALUES (${id}) ON CONFLICT (id) DO NOTHING`

  /**
   * Row-locks the agent (creating it first): every spend and registration of one identity is serialized.
   * The no-op update takes the same row lock as SELECT ... FOR UPDATE, in one statement instead of two.
   */
  const lock = SqlSchema.single({
    Request: Schema.String,
    Result: AgentRow,
    execute: (id) =>
      sql`INSERT INTO agents (id) VALUES (${id}) ON CONFLICT (id) DO UPDATE SET id = excluded.id RETURNING *`
  })

  const find = SqlSchema.findOne({
    Request: Schema.String,
    Result: AgentRow,
    execute: (id) => sql`SELECT * FROM agents WHERE id = ${id}`
  })

  const update = (id: string, settings: AgentSettings) =>
    sql`UPDATE agents SET payout_address = ${settings.payoutAddress}, payout_signed_at = ${settings.payoutSignedAt},
        spend_cap_micro = ${settings.capMicro}, require_sign_in = ${settings.requireSignIn}, updated_at = now()
      WHERE id = ${id}`

  /** Adds to the identity's spend only if it stays within its cap; no row back means the cap would break. */
  const spend = SqlSchema.findOne({
    Request: Schema.Struct({ id: Schema.String, amount: Schema.Number }),
    Result: AgentRow,
    execute: ({ amount, id }) =>
      sql`UPDATE agents SET spent_micro = spent_micro + ${amount}, updated_at = now()
        WHERE id = ${id} AND spent_micro + ${amount} <= spend_cap_micro RETURNING *`
  })

  const stats = SqlSchema.single({
    Request: Schema.String,
    Result: AgentStats,
    execute: (id) =>
      sql`SELECT
        coalesce(sum(earnings.filer_micro), 0) AS earned_micro,
        coalesce(sum(earnings.filer_micro) FILTER (WHERE earnings.payout_status = 'sent'), 0) AS earned_on_chain_micro,
        ${filedBy(sql, id)} AS filed,
        coalesce(sum(earnings.sales), 0) AS sales,
        ${boughtBy(sql, id)} AS purchases
      FROM ${earningsOf(sql, id)} AS earnings`
  })

  return {
    ensure: (id: string) => Effect.orDie(ensure(id)),
    lock: (id: string) => Effect.orDie(lock(id)),
    find: (id: string) => Effect.orDie(find(id)),
    update: (id: string, settings: AgentSettings) => Effect.orDie(update(id, settings)),
    spend: (id: string, amount: number) => Effect.orDie(spend({ id, amount })),
    stats: (id: string) => Effect.orDie(stats(id))
  } as const
})

export class AgentRepo extends Context.Tag("AgentRepo")<AgentRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(AgentRepo, make)
}
