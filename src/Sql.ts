import { Migrator, type SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import * as Pglite from "../adapters/storage/Pglite.ts"
import * as Postgres from "../adapters/storage/Postgres.ts"
import { DeskConfig } from "./Config.ts"
import { loader } from "./Migrations/index.ts"

const runMigrations = Migrator.make({})({ loader, table: "desk_migrations" })

/** PostgreSQL when DATABASE_URL is set, the embedded PGlite database in DESK_DATA_DIR otherwise. */
export const StorageLive = Layer.unwrapEffect(
  Effect.map(DeskConfig, (config) =>
    Option.match(config.databaseUrl, {
      onNone: () => Pglite.layer({ dataDir: config.dataDir }),
      onSome: Postgres.layer
    }))
)

/** A SqlClient whose schema is current: the desk cannot start on an old schema. */
export const migrated = <E, R>(storage: Layer.Layer<SqlClient.SqlClient, E, R>) =>
  Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(storage))

export const SqlLive = migrated(StorageLive)
