import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { PGlite, types } from "@electric-sql/pglite"
import type { ParserOptions, PGliteOptions, Results, RowMode } from "@electric-sql/pglite"
import { Effect, Layer, Stream } from "effect"
import type { Scope } from "effect"
import { mkdir } from "node:fs/promises"
import { makeFairLock } from "./FairLock.ts"

export interface PgliteOptions {
  readonly dataDir?: string | undefined
}

const localDate = /^(\d{4,})-(\d{2})-(\d{2})$/

// Parse like node-postgres so decoders behave the same on both backends. Still different: interval
// (string, not an object), numeric[] (strings, not floats), timestamps before year 100.
const parsers: ParserOptions = {
  [types.INT8]: (value) => value,
  [types.BYTEA]: (value) => Buffer.from(value.slice(2), "hex"),
  [types.DATE]: (value) => {
    const ymd = localDate.exec(value)
    return ymd === null
      ? types.parsers[types.DATE]!(value)
      : new Date(Number(ymd[1]), Number(ymd[2]) - 1, Number(ymd[3]))
  }
}

const makeConnection = (db: PGlite): Connection => {
  // Without parameters node-postgres uses the simple protocol, which allows several statements.
  const run = (sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) =>
    Effect.tryPromise({
      try: (): Promise<ReadonlyArray<Results<unknown>>> =>
        params.length === 0
          ? db.exec(sql, { rowMode })
          : db.query(sql, [...params], { rowMode }).then((result) => [result]),
      catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
    })

  const rows = (sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) =>
    Effect.map(run(sql, params, rowMode), (results): ReadonlyArray<any> =>
      results.length === 1 ? results[0]!.rows : results.map((result) => result.rows))

  const execute: Connection["execute"] = (sql, params, transformRows) =>
    transformRows ? Effect.map(rows(sql, params, "object"), transformRows) : rows(sql, params, "object")

  return {
    execute,
    executeRaw: (sql, params) => Effect.map(run(sql, params, "object"), (results) =>
      results.length === 1 ? results[0] : results),
    executeValues: (sql, params) => rows(sql, params, "array"),
    executeUnprepared: execute,
    executeStream: (sql, params, transformRows) =>
      Stream.flatMap(execute(sql, params, transformRows), Stream.fromIterable)
  }
}

const open = (dataDir: string | undefined) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        // NODEFS writes through (writeSync) before COMMIT returns: safe from kill -9, not from power loss
        // (PGlite runs fsync=off; Emscripten's fsync is a no-op). relaxedDurability would ack before syncToFs.
        const options: PGliteOptions = { parsers, relaxedDurability: false }
        if (dataDir === undefined) return PGlite.create(options)
        await mkdir(dataDir, { recursive: true })
        return PGlite.create({ ...options, dataDir })
      },
      catch: (cause) => new SqlError({ cause, message: "Failed to open PGlite" })
    }),
    (db) => Effect.promise(() => db.close())
  )

export const make = (
  options: PgliteOptions
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const db = yield* open(options.dataDir)
    const connection = makeConnection(db)
    // PGlite is a single session, so a transaction must own it until its scope closes; statements get it in
    // the order they asked for it.
    const lock = makeFairLock()
    // Waiting for the lock stays interruptible (acquireRelease would not), like Semaphore.withPermits.
    const acquire = Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        restore(lock.take),
        Effect.as(Effect.addFinalizer(() => lock.release), connection)
      )
    )
    return yield* SqlClient.make({
      acquirer: acquire,
      transactionAcquirer: acquire,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    })
  })

export const layer = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
