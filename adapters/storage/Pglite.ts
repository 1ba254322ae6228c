import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import type { Results, RowMode } from "@electric-sql/pglite"
import { Effect, Layer, Stream } from "effect"
import type { Scope } from "effect"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import type { StartupError } from "../../src/Domain/StartupError.ts"
import { holdDataDir } from "./DataDirLock.ts"
import { makeFairLock } from "./FairLock.ts"
import type { OpenOptions, Reply, Request } from "./PgliteWorker.ts"

export interface PgliteOptions {
  readonly dataDir?: string | undefined
}

// The bundle (scripts/bundle.mjs) defines this as the worker's bundled file beside it.
declare const __DESK_PGLITE_WORKER__: string | undefined

/**
 * The bundled worker beside the bundle; from the sources (tsx, tests) the worker is TypeScript too, so it
 * registers tsx's loader before importing it (`--import tsx` in a worker's execArgv does not reach it on Node 20).
 */
const newWorker = (options: OpenOptions) => {
  // Rows pass through the worker briefly: a small young generation keeps its heap small under load.
  const limits = { execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 8 } }
  if (typeof __DESK_PGLITE_WORKER__ === "string") {
    return new Worker(new URL(__DESK_PGLITE_WORKER__, import.meta.url), { workerData: options, ...limits })
  }
  // tsx's ESM entry of its API (require.resolve would give the CommonJS one).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href
  const entry = new URL("./PgliteWorker.ts", import.meta.url).href
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}) })`,
    { eval: true, workerData: options, ...limits }
  )
}

const BYTEA = 17

/** bytea arrives as PostgreSQL's hex text (a Buffer would not survive the thread boundary as one). */
const withBuffers = (result: Results<unknown>, rowMode: RowMode): Results<unknown> => {
  const columns = (result.fields ?? []).flatMap((
    field,
    index
  ) => (field.dataTypeID === BYTEA ? [{ index, name: field.name }] : []))
  if (columns.length === 0) return result
  const decode = (value: unknown) => (typeof value === "string" ? Buffer.from(value.slice(2), "hex") : value)
  for (const row of result.rows as Array<Record<string | number, unknown>>) {
    for (const column of columns) {
      const key = rowMode === "array" ? column.index : column.name
      row[key] = decode(row[key])
    }
  }
  return result
}

interface Session {
  readonly run: (
    sql: string,
    params: ReadonlyArray<unknown>,
    rowMode: RowMode
  ) => Promise<ReadonlyArray<Results<unknown>>>
  readonly close: () => Promise<void>
}

const toError = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message)), fields)

/** The database thread, answering one message at a time; every pending call fails if the thread dies. */
const startSession = (options: OpenOptions): Promise<Session> =>
  new Promise((resolve, reject) => {
    const worker = newWorker(options)
    const pending = new Map<number, (reply: Reply) => void>()
    let nextId = 1
    let opened = false
    let dead: Error | undefined
    const failAll = (error: Error) => {
      dead ??= error
      for (const [id, settle] of pending) settle({ id, ok: false, error: { message: error.message } })
      pending.clear()
      if (!opened) reject(error)
    }
    // A thread that failed to open would otherwise keep the process alive after the desk gave up.
    const failOpen = (error: Error) => {
      void worker.terminate()
      reject(error)
    }
    worker.on("error", failAll)
    worker.on("exit", (code) => failAll(new Error(`the PGlite thread exited (${code})`)))
    const call = (request: Omit<Request, "id">) =>
      new Promise<ReadonlyArray<Results<unknown>>>((resolveCall, rejectCall) => {
        // Nobody would answer: fail now rather than wait forever.
        if (dead !== undefined) return rejectCall(dead)
        const id = nextId++
        pending.set(id, (reply) => (reply.ok ? resolveCall(reply.results) : rejectCall(toError(reply.error))))
        worker.postMessage({ ...request, id })
      })
    worker.on("message", (reply: Reply) => {
      if (reply.id === 0) {
        if (!reply.ok) return failOpen(toError(reply.error))
        opened = true
        return resolve({
          run: (sql, params, rowMode) =>
            call({ op: "run", sql, params, rowMode } as Omit<Request, "id">).then((results) =>
              results.map((result) => withBuffers(result, rowMode))
            ),
          close: async () => {
            await call({ op: "close" } as Omit<Request, "id">).catch(() => {})
            await worker.terminate()
          }
        })
      }
      const settle = pending.get(reply.id)
      pending.delete(reply.id)
      settle?.(reply)
    })
  })

const makeConnection = (session: Session): Connection => {
  const run = (sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) =>
    Effect.tryPromise({
      try: () => session.run(sql, params, rowMode),
      catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
    })

  /** Object rows, or arrays of values with `rowMode` "array"; a multi-statement query answers a list per statement. */
  const rows = <Row extends object>(sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) =>
    Effect.map(
      run(sql, params, rowMode),
      (results): ReadonlyArray<Row> =>
        (results.length === 1 ? results[0]!.rows : results.map((result) => result.rows)) as ReadonlyArray<Row>
    )

  const execute: Connection["execute"] = (sql, params, transformRows) =>
    transformRows ? Effect.map(rows<object>(sql, params, "object"), transformRows) : rows<object>(sql, params, "object")

  return {
    execute,
    executeRaw: (sql, params) =>
      Effect.map(run(sql, params, "object"), (results) => results.length === 1 ? results[0] : results),
    executeValues: (sql, params) => rows<ReadonlyArray<unknown>>(sql, params, "array"),
    executeUnprepared: execute,
    executeStream: (sql, params, transformRows) =>
      Stream.flatMap(execute(sql, params, transformRows), Stream.fromIterable)
  }
}

/**
 * A data directory that holds no database yet is created by a thread of its own, which then ends: creating it
 * (initdb, inside WebAssembly) grows the thread's linear memory, which never shrinks, so a desk that served on
 * from that thread stayed at ~750 MB RSS until its first restart, against ~290 MB after it.
 */
const created = (dataDir: string) =>
  existsSync(join(dataDir, "PG_VERSION")) ? Effect.void : Effect.tryPromise({
    try: () => startSession({ dataDir }).then((session) => session.close()),
    catch: (cause) => new SqlError({ cause, message: "Failed to create the PGlite database" })
  })

const open = (dataDir: string | undefined) =>
  Effect.zipRight(
    dataDir === undefined ? Effect.void : Effect.zipRight(holdDataDir(dataDir), created(dataDir)),
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () => startSession({ dataDir }),
        catch: (cause) => new SqlError({ cause, message: "Failed to open PGlite" })
      }),
      (session) => Effect.promise(() => session.close())
    )
  )

export const make = (
  options: PgliteOptions
): Effect.Effect<SqlClient.SqlClient, SqlError | StartupError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const connection = makeConnection(yield* open(options.dataDir))
    // PGlite is a single session, so a transaction must own it until its scope closes; statements get it in
    // the order they asked for it.
    const lock = makeFairLock()
    // Waiting for the lock stays interruptible (acquireRelease would not), like Semaphore.withPermits.
    const acquire = Effect.as(lock.hold, connection)
    return yield* SqlClient.make({
      acquirer: acquire,
      transactionAcquirer: acquire,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    })
  })

export const layer = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError | StartupError> =>
  Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
