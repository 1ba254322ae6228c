import * as Reactivity from "@effect/experimental/Reactivity"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Console, Effect, Layer, Redacted, Schema } from "effect"
import { rmSync } from "node:fs"
import { resolve } from "node:path"
import * as Pglite from "../adapters/storage/Pglite.ts"
import * as Postgres from "../adapters/storage/Postgres.ts"
import { migrated } from "../src/Sql.ts"
import { loadCatalog, loadedCatalog, markerOf } from "./Load.ts"

export type StoreKind = "postgres" | "pglite"

/** Where one benchmark catalog lives, how the desk is pointed at it, and a client for the bench itself. */
export interface BenchStore {
  readonly kind: StoreKind
  readonly label: string
  /** Environment of the desk process. */
  readonly env: Record<string, string>
  readonly layer: Layer.Layer<SqlClient.SqlClient, unknown>
  /** Drops the catalog so the next load starts from nothing. */
  readonly reset: Effect.Effect<void>
}

const Exists = Schema.Struct({ exists: Schema.Boolean })

/**
 * A database of its own per catalog size on the server of `adminUrl` (`desk_bench_<handoffs>`): the
 * database named in the URL is only used to create it, never written to.
 */
const postgres = (adminUrl: string, handoffs: number): BenchStore => {
  const name = `desk_bench_${handoffs}`
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const admin = <A, E>(use: (sql: PgClient.PgClient) => Effect.Effect<A, E>) =>
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({ url: Redacted.make(adminUrl), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer)),
        use
      )
    ).pipe(Effect.orDie)
  const ensure = admin((sql) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ${name}) AS "exists"`
      if (!Schema.decodeUnknownSync(Exists)(rows[0]).exists) yield* sql.unsafe(`CREATE DATABASE ${name}`)
    })
  )
  return {
    kind: "postgres",
    label: `PostgreSQL (${url.host}/${name})`,
    env: { DATABASE_URL: url.toString() },
    // The bench's own statements (rebuilding indexes over a million rows) run longer than a request's may.
    layer: Layer.unwrapEffect(Effect.as(ensure, Postgres.layer(Redacted.make(url.toString())))).pipe(
      Layer.provide(Layer.setConfigProvider(
        ConfigProvider.fromMap(new Map([["DESK_STATEMENT_TIMEOUT_MS", "0"]])).pipe(
          ConfigProvider.orElse(() => ConfigProvider.fromEnv())
        )
      ))
    ),
    reset: admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  }
}

const pglite = (handoffs: number): BenchStore => {
  const dataDir = resolve(".bench-data", `pglite-${handoffs}`)
  return {
    kind: "pglite",
    label: `embedded PGlite (${dataDir})`,
    env: { DESK_DATA_DIR: dataDir },
    layer: Pglite.layer({ dataDir }),
    reset: Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))
  }
}

export const benchStore = (kind: StoreKind, handoffs: number, databaseUrl: string | undefined): BenchStore => {
  if (kind === "pglite") return pglite(handoffs)
  if (databaseUrl === undefined) {
    throw new Error("--store postgres needs DATABASE_URL (the server to create the bench database on)")
  }
  return postgres(databaseUrl, handoffs)
}

/**
 * Reuses a complete catalog of this seed and size that no run has written to; anything else (none, partial,
 * other, or holding an earlier run's filings, receipts or identities) is rebuilt.
 */
export const prepareCatalog = (store: BenchStore, seed: number, handoffs: number, reload: boolean) =>
  Effect.gen(function*() {
    const current = reload
      ? null
      : yield* Effect.provide(loadedCatalog(handoffs), migrated(store.layer)).pipe(Effect.orDie)
    const ours = current !== null && current.marker === markerOf(seed, handoffs)
    if (ours && current.untouched) {
      yield* Console.log(`catalog: reusing ${handoffs.toLocaleString("en")} handoffs in ${store.label}`)
      return { reused: true as const }
    }
    const why = ours ? " (an earlier run wrote to it)" : ""
    yield* Console.log(`catalog: loading ${handoffs.toLocaleString("en")} handoffs into ${store.label}${why}`)
    yield* store.reset
    const timing = yield* Effect.provide(loadCatalog(seed, handoffs), migrated(store.layer)).pipe(Effect.orDie)
    yield* Console.log(
      `catalog: loaded in ${timing.totalSeconds.toFixed(1)} s (rows ${timing.insertSeconds.toFixed(1)} s, ` +
        `indexes ${timing.indexSeconds.toFixed(1)} s)`
    )
    return { reused: false as const, ...timing }
  })
