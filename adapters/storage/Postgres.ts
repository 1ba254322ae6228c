import { PgClient } from "@effect/sql-pg"
import { Config, Duration, Effect, Layer, type Redacted } from "effect"

/** Connections per desk process; PostgreSQL's own max_connections bounds the sum over all desks. */
export const poolSize = Config.integer("DESK_DB_POOL").pipe(
  Config.validate({ message: "DESK_DB_POOL must be between 1 and 1000", validation: (n) => n >= 1 && n <= 1000 }),
  Config.withDefault(10)
)

/** PostgreSQL through @effect/sql-pg; the pool reconnects by itself after a server restart. */
export const layer = (url: Redacted.Redacted) =>
  Layer.unwrapEffect(
    Effect.map(poolSize, (maxConnections) =>
      PgClient.layer({
        url,
        maxConnections,
        connectTimeout: Duration.seconds(5),
        idleTimeout: Duration.seconds(30),
        applicationName: "handoff-desk"
      }))
  )
