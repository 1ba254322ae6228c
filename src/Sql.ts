import { Migrator, SqlClient, type SqlError } from "@effect/sql"
import { Effect, Layer } from "effect"
import { loader } from "./Migrations/index.ts"

const MIGRATIONS_TABLE = "desk_migrations"

/**
 * Desks started together on one PostgreSQL would race to create the migrations table (the Migrator locks it
 * only once it exists, and one of two concurrent CREATE TABLEs fails): create it first, one desk at a time.
 * The columns are the Migrator's own.
 */
const ensureMigrationsTable = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(hashtext(${MIGRATIONS_TABLE}))`,
      sql`CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (
        migration_id integer PRIMARY KEY,
        created_at timestamp with time zone NOT NULL DEFAULT now(),
        name text NOT NULL
      )`
    )
  ))

/**
 * In one transaction with no statement timeout (the desk's read deadline follows it: adapters/storage/
 * ReadDeadline.ts): a desk started beside one that is migrating waits on the Migrator's
 * `LOCK TABLE desk_migrations` for as long as those migrations take. Under the 5 s timeout it failed to start
 * whenever they took longer (0019 takes about 20 s at 1,000,000 handoffs), and with DESK_WORKERS its failure
 * stopped the worker that was migrating, whose work rolled back: no start ever completed the upgrade.
 */
const runMigrations = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    sql`SET LOCAL statement_timeout = 0`.pipe(
      Effect.zipRight(ensureMigrationsTable),
      Effect.zipRight(Migrator.make({})({ loader, table: MIGRATIONS_TABLE }))
    )
  ))

/** A SqlClient whose schema is current: the desk cannot start on an old schema. */
export const migrated = <E, R>(storage: Layer.Layer<SqlClient.SqlClient, E, R>) =>
  Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(storage))

/** PostgreSQL's (and PGlite's) unique_violation: a constraint refused a second row where one may exist. */
export const isUniqueViolation = (error: SqlError.SqlError) =>
  (error.cause as { code?: unknown } | undefined)?.code === "23505"

/** SQLSTATE: five digits or capitals. Node's own errors (a reset connection) carry codes such as `ECONNRESET`. */
const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * Whether the database answered the statement with an error, so that it wrote nothing: a statement outside a
 * transaction that ends in an ERROR is rolled back whole. Not so when the desk lost its connection (no answer, or
 * a FATAL ending the session, or class 08): the server may have committed the statement before the link went, and
 * only a read can tell.
 */
export const isRefusedStatement = (error: SqlError.SqlError): boolean => {
  const cause = error.cause as { code?: unknown; severity?: unknown } | undefined
  const code = cause?.code
  if (typeof code !== "string" || !SQLSTATE.test(code) || code.startsWith("08")) return false
  return cause?.severity !== "FATAL" && cause?.severity !== "PANIC"
}

/** The constraint (or unique index) a failed statement broke, where the database names one. */
export const brokenConstraint = (error: SqlError.SqlError): string | undefined => {
  const constraint = (error.cause as { constraint?: unknown } | undefined)?.constraint
  return typeof constraint === "string" ? constraint : undefined
}
