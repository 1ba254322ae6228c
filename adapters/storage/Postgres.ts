import { PgClient } from "@effect/sql-pg"
import { Duration, type Redacted } from "effect"

/** PostgreSQL through @effect/sql-pg; the pool reconnects by itself after a server restart. */
export const layer = (url: Redacted.Redacted) =>
  PgClient.layer({
    url,
    maxConnections: 10,
    connectTimeout: Duration.seconds(5),
    idleTimeout: Duration.seconds(30),
    applicationName: "handoff-desk"
  })
