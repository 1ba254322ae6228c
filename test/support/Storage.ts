import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import * as Postgres from "../../adapters/storage/Postgres.ts"

export const DATABASE_URL = process.env.DATABASE_URL

export interface Backend {
  readonly name: "pglite" | "postgres"
  readonly available: boolean
  readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
}

/** The URL of a throw-away PostgreSQL database, dropped (whoever is still connected) when the scope closes. */
export const freshDatabaseUrl = (adminUrl: string) =>
  Effect.gen(function*() {
    const name = `desk_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const admin = yield* PgClient.make({ url: Redacted.make(adminUrl), maxConnections: 1 }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.orDie
    )
    yield* admin.unsafe(`CREATE DATABASE ${name}`).pipe(Effect.orDie)
    yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return url.toString()
  })

/** A throw-away PostgreSQL database per suite, dropped when the suite's scope closes. */
const freshPostgres = (adminUrl: string) =>
  Layer.unwrapScoped(Effect.map(freshDatabaseUrl(adminUrl), (url) => Postgres.layer(Redacted.make(url))))

const ALL: ReadonlyArray<Backend> = [
  { name: "pglite", available: true, layer: Pglite.layer({}) },
  {
    name: "postgres",
    available: DATABASE_URL !== undefined,
    layer: DATABASE_URL === undefined ? Layer.die("DATABASE_URL is not set") : freshPostgres(DATABASE_URL)
  }
]

/**
 * The store of this vitest project (vitest.config.ts runs the storage suites once per store). One
 * store per file on purpose: a second `it.layer` suite in the same file was seen reusing the first
 * suite's services (module-level layers) over a different SqlClient than the one it was given.
 */
export const backends: ReadonlyArray<Backend> = ALL.filter((_) => _.name === (process.env.DESK_TEST_STORE ?? "pglite"))
