import { Config } from "effect"

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
