import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** How many rows each table of the desk's schema holds: equal before and after, nothing was written. */
export const rowCounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql`SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ table_name: Schema.String }))))
  )
  const counts: Record<string, number> = {}
  for (const { table_name } of tables) {
    const [row] = yield* sql`SELECT count(*)::int AS n FROM ${sql(table_name)}`
    counts[table_name] = Number(row!.n)
  }
  return counts
}).pipe(Effect.orDie)
