import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"

const PlanRows = Schema.Struct({ "Plan Rows": Schema.Number })
// The plan arrives as JSON or as its text, as the driver hands it over.
const Explained = Schema.Struct({
  "QUERY PLAN": Schema.Union(
    Schema.Tuple(Schema.Struct({ Plan: PlanRows })),
    Schema.parseJson(Schema.Tuple(Schema.Struct({ Plan: PlanRows })))
  )
})

/**
 * How many rows PostgreSQL's planner expects `SELECT 1 <from>` to return: planning only, no row is read. An
 * estimate from the table's statistics, never a count: a total past what is counted exactly.
 */
export const plannedRows = (sql: SqlClient.SqlClient, from: Statement.Fragment) =>
  Effect.map(
    SqlSchema.single({
      Request: Schema.Void,
      Result: Explained,
      execute: () => sql`EXPLAIN (FORMAT JSON) SELECT 1 ${from}`
    })(undefined),
    (plan) => Math.round(plan["QUERY PLAN"][0].Plan["Plan Rows"])
  )
