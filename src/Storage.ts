import type { SqlError } from "@effect/sql/SqlError"
import { Config, Context, type Stream } from "effect"

// The storage port: what every store adapter (adapters/storage) is configured by. The SQL itself is one dialect,
// PostgreSQL, spoken through @effect/sql's SqlClient by embedded PGlite and a PostgreSQL server alike.

/** Connections per desk process on PostgreSQL; PostgreSQL's own max_connections bounds the sum over all desks. */
export const poolSizeConfig = Config.integer("DESK_DB_POOL").pipe(
  Config.validate({ message: "DESK_DB_POOL must be between 1 and 1000", validation: (n) => n >= 1 && n <= 1000 }),
  Config.withDefault(10)
)

/** The longest one SQL statement may run on PostgreSQL (milliseconds) before it is cancelled; 0 means no limit. */
export const statementTimeoutConfig = Config.integer("DESK_STATEMENT_TIMEOUT_MS").pipe(
  Config.validate({
    message: "DESK_STATEMENT_TIMEOUT_MS must be between 0 (no limit) and 600000",
    validation: (n) => n >= 0 && n <= 600_000
  }),
  Config.withDefault(5_000)
)

/**
 * How long past the statement timeout the desk waits for PostgreSQL's answer (its cancellation, at the latest)
 * before it takes the server or the link to be silent and gives the statement up.
 */
export const SILENT_GRACE_MS = 2_000

/**
 * Whether PostgreSQL keeps the desk's hot statements prepared on each connection (PREPARED). Behind a
 * pooler that hands one client's statements to several server connections (PgBouncer in transaction mode before
 * 1.21, or without max_prepared_statements), set it to false.
 */
export const preparedStatementsConfig = Config.boolean("DESK_PG_PREPARE").pipe(Config.withDefault(true))

/**
 * Leads the text of a statement that PostgreSQL keeps prepared on each connection (adapters/storage/Postgres.ts):
 * only fixed-shape statements on hot paths (one row by key), never the catalog search, whose text varies and
 * whose plan depends on its values. A repository writes it at the start of the statement's template. To PGlite,
 * and to a server without it, it is a comment.
 */
export const PREPARED = "/* prepared */"

/**
 * PostgreSQL's LISTEN, for what several desks sharing a database must hear of each other's writes (the preview
 * cache, src/Catalog/PreviewCache.ts). Each stream listens on a connection of its own and fails when that
 * connection breaks; ending the stream closes the connection at once, with no round trip a silent link would
 * never answer. Absent on the embedded store (one desk).
 */
export class Notifications extends Context.Tag("Notifications")<Notifications, {
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
}>() {}
