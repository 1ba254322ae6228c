import { SqlClient, SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Pglite from "../../adapters/storage/Pglite.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/insertLoop.ts", import.meta.url))

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "handoff-pglite-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const killAfterCommits = (dataDir: string, commits: number) =>
  Effect.async<number, Error>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", fixture, dataDir], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let reported = 0
    let pending = ""
    child.stdout.on("data", (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) reported = Number(line.replace("committed ", ""))
      if (reported >= commits) child.kill("SIGKILL")
    })
    child.on("close", (code, signal) =>
      resume(signal === "SIGKILL" ? Effect.succeed(reported) : Effect.fail(new Error(`fixture exited ${code}`))))
    return Effect.sync(() =>
      child.kill("SIGKILL")
    )
  })

it.layer(Pglite.layer({}), { timeout: "30 seconds" })("Pglite in memory", (it) => {
  it.effect("binds parameters and compiles the pg dialect", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select ${1}::int as x`).toEqual([{ x: 1 }])
      expect(sql.onDialectOrElse({ pg: () => "pg", orElse: () => "other" })).toBe("pg")

      yield* sql`create table people (id serial primary key, name text not null)`
      yield* sql`insert into people ${sql.insert([{ name: "ada" }, { name: "bob" }, { name: "cy" }])}`
      const found = yield* sql`select name from people where name in ${sql.in(["ada", "cy"])} order by name`
      expect(found).toEqual([{ name: "ada" }, { name: "cy" }])

      expect(yield* sql`select id, name from people where id = ${2}`.values).toEqual([[2, "bob"]])
      expect(yield* sql.unsafe("select 1 as a; select 2 as b")).toEqual([[{ a: 1 }], [{ b: 2 }]])
      const streamed = yield* Stream.runCollect(sql`select generate_series(1, 3) as n`.stream)
      expect(Chunk.toArray(streamed)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
    }))

  it.effect("decodes values as node-postgres does", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql`select
        9007199254740993::int8 as big, 42::int8 as small, array[1, 2]::int8[] as bigs, 1.50::numeric as amount,
        ${"2024-01-02T03:04:05.678Z"}::timestamptz as at, ${JSON.stringify({ a: [1, 2] })}::jsonb as doc,
        array['x', 'y,"z'] as tags, '2024-05-06'::date as day, '\\x01ff'::bytea as bytes`
      expect(row).toEqual({
        big: "9007199254740993",
        small: "42",
        bigs: ["1", "2"],
        amount: "1.50",
        at: new Date("2024-01-02T03:04:05.678Z"),
        doc: { a: [1, 2] },
        tags: ["x", "y,\"z"],
        day: new Date(2024, 4, 6),
        bytes: Buffer.from([1, 255])
      })
    }))

  it.effect("commits and rolls back transactions", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table ledger (id int primary key)`
      yield* sql.withTransaction(sql`insert into ledger values (1)`)
      const failure = yield* sql.withTransaction(
        Effect.zipRight(sql`insert into ledger values (2)`, Effect.fail("boom"))
      ).pipe(Effect.flip)
      expect(failure).toBe("boom")
      expect(yield* sql`select id from ledger`).toEqual([{ id: 1 }])
    }))

  it.effect("rolls back only the inner savepoint of a nested transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table nested (id int primary key)`
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`insert into nested values (1)`
        yield* sql.withTransaction(Effect.zipRight(sql`insert into nested values (2)`, Effect.fail("inner")))
          .pipe(Effect.ignore)
        yield* sql`insert into nested values (3)`
      }))
      expect(yield* sql`select id from nested order by id`).toEqual([{ id: 1 }, { id: 3 }])
    }))

  it.effect("serializes concurrent transactions", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table counter (n int not null)`
      yield* sql`insert into counter values (0)`
      const log: Array<string> = []
      const increment = (name: string) =>
        sql.withTransaction(Effect.gen(function*() {
          log.push(`${name} begin`)
          const [row] = yield* sql`select n from counter`
          yield* Effect.yieldNow()
          yield* sql`update counter set n = ${Number(row!.n) + 1}`
          log.push(`${name} end`)
        }))
      yield* Effect.all([increment("a"), increment("b"), sql`select 1`], { concurrency: "unbounded" })
      expect(yield* sql`select n from counter`).toEqual([{ n: 2 }])
      expect([["a begin", "a end", "b begin", "b end"], ["b begin", "b end", "a begin", "a end"]]).toContainEqual(log)
    }))

  it.effect("surfaces a unique violation with its PostgreSQL code", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table receipts (id text primary key)`
      yield* sql`insert into receipts values ('r1')`
      const error = yield* Effect.flip(sql`insert into receipts values ('r1')`)
      expect(error).toBeInstanceOf(SqlError.SqlError)
      expect(error.cause).toMatchObject({ code: "23505" })
    }))
})

describe("Pglite on disk", () => {
  it.scopedLive("keeps data across close and reopen", () =>
    Effect.gen(function*() {
      const dataDir = join(yield* tempDir, "nested", "db")
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table notes (body text not null)`
        yield* sql.withTransaction(sql`insert into notes values ('kept')`)
      }).pipe(Effect.provide(Pglite.layer({ dataDir })))
      const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select body from notes`)
        .pipe(Effect.provide(Pglite.layer({ dataDir })))
      expect(rows).toEqual([{ body: "kept" }])
      // Two embedded databases opened one after the other: 8 s alone, 35 s on a machine running other suites.
    }), 90_000)

  it.scopedLive("keeps acknowledged commits and no partial transaction after kill -9", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const reported = yield* killAfterCommits(dataDir, 25)
      const [batches, partial] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          sql`select count(distinct batch)::int as count, max(batch) as last from batches`,
          sql`select batch from batches group by batch having count(*) <> 3`
        ])).pipe(Effect.provide(Pglite.layer({ dataDir })))
      expect(partial).toEqual([])
      expect(batches[0]!.last).toBeGreaterThanOrEqual(reported)
      expect(batches[0]!.count).toBe(batches[0]!.last)
    }), 60_000)
})
