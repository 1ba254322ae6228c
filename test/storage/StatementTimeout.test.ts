import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ConfigProvider, Deferred, Effect, Fiber, Layer, Redacted } from "effect"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { migrated } from "../../src/Sql.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/** A throw-away database whose statements may each run 300 ms. */
const shortStatements = Layer.unwrapScoped(
  Effect.map(freshDatabaseUrl(DATABASE_URL ?? ""), (url) =>
    Postgres.layer(Redacted.make(url)).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DESK_STATEMENT_TIMEOUT_MS", "300"]]))))
    ))
)

const get = (path: string) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path)
      return { status: response.status, headers: response.headers, json: await readJson(response) }
    }))

/** Holds an exclusive lock on the handoffs table until `release` is completed; returns once it is held. */
const lockHandoffs = (release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const held = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(sql.withTransaction(
      Effect.zipRight(
        Effect.zipRight(sql`LOCK TABLE handoffs IN ACCESS EXCLUSIVE MODE`, Deferred.succeed(held, undefined)),
        Deferred.await(release)
      )
    ))
    yield* Deferred.await(held)
    return holder
  })

// PGlite is one session in this process with no statement timer: the limit is PostgreSQL's (the store that has a pool).
describe.skipIf(process.env.DESK_TEST_STORE !== "postgres" || DATABASE_URL === undefined)(
  "the per-statement time limit",
  () => {
    layer(deskOn(shortStatements), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("a statement past DESK_STATEMENT_TIMEOUT_MS is cancelled: 503 unavailable with Retry-After, REST and MCP alike", () =>
        Effect.gen(function*() {
          expect((yield* get("/api/discover?sort=price")).status).toBe(200)
          const release = yield* Deferred.make<void>()
          const holder = yield* lockHandoffs(release)
          const started = Date.now()
          const slow = yield* get("/api/discover?sort=price")
          expect(slow.status).toBe(503)
          expect(slow.headers.get("retry-after")).toBe("5")
          expect(slow.json).toMatchObject({ ok: false, error: "unavailable" })
          expect(slow.json.message).toContain("narrow the query")
          // Cancelled by the database after 300 ms, not left waiting for the lock.
          expect(Date.now() - started).toBeLessThan(5_000)

          const desk = yield* TestDesk
          const viaMcp = yield* Effect.promise(async () => {
            const client = new Client({ name: "desk-test", version: "1.0.0" })
            await client.connect(new StreamableHTTPClientTransport(new URL(`${desk.url}/mcp`)))
            const result = await client.callTool({ name: "search_handoffs", arguments: { sort: "price" } })
            await client.close()
            return result
          })
          expect(viaMcp.isError).toBe(true)
          const content = viaMcp.content as Array<{ text: string }>
          expect(JSON.parse(content[0]!.text)).toMatchObject({ ok: false, error: "unavailable" })

          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          expect((yield* get("/api/discover?sort=price")).status).toBe(200)
        }))

      it.scoped("a desk starting while another migrates waits for it past the limit, then starts", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const release = yield* Deferred.make<void>()
          const held = yield* Deferred.make<void>()
          // Another desk's migrations, past the limit and the desk's read deadline (limit + 2 s); the lock is the
          // Migrator's own.
          const migrating = yield* Effect.fork(sql.withTransaction(
            sql`SET LOCAL statement_timeout = 0`.pipe(
              Effect.zipRight(sql`LOCK TABLE desk_migrations IN ACCESS EXCLUSIVE MODE`),
              Effect.zipRight(Deferred.succeed(held, undefined)),
              // A long migration statement (idle in its transaction that long, the server would end it).
              Effect.zipRight(sql`SELECT pg_sleep(3)`),
              Effect.zipRight(Deferred.succeed(release, undefined))
            )
          ))
          yield* Deferred.await(held)
          const started = Date.now()
          // This desk's start: its migrations, on a connection of its own. Under the limit it failed after 300 ms.
          yield* Layer.build(migrated(Layer.succeed(SqlClient.SqlClient, sql)))
          expect(yield* Deferred.isDone(release)).toBe(true)
          expect(Date.now() - started).toBeGreaterThanOrEqual(2_700)
          yield* Fiber.join(migrating)
        }))
    })
  }
)
