import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Effect, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { bookViolations } from "../support/Books.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { type Acks, lostAcks, startLoad } from "../support/Load.ts"
import { postJson, send } from "../support/Loopback.ts"
import { startDesk, tempDataDir } from "../support/Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

interface Store {
  readonly env: Record<string, string>
  /** The desk's database, opened from the test; for PGlite only while no desk holds the directory. */
  readonly sql: Layer.Layer<SqlClient.SqlClient, unknown>
}

const ALL = [
  {
    name: "pglite",
    available: true,
    make: Effect.map(
      tempDataDir,
      (dir): Store => ({ env: { DESK_DATA_DIR: dir }, sql: Pglite.layer({ dataDir: dir }) })
    )
  },
  {
    name: "postgres",
    available: DATABASE_URL !== undefined,
    make: Effect.map(
      Effect.suspend(() => freshDatabaseUrl(DATABASE_URL!)),
      (url): Store => ({ env: { DATABASE_URL: url }, sql: Postgres.layer(Redacted.make(url)) })
    )
  }
] as const

/** The store of this vitest project (see vitest.config.ts): each runs in its own worker, side by side. */
const stores = ALL.filter((_) => _.name === (process.env.DESK_TEST_STORE ?? "pglite"))

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

const catalogSize = (url: string) =>
  Effect.map(send(`${url}/api/handoffs?include=demo&limit=1`, { fresh: true }), (_) => _.json.total as number)

for (const store of stores) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!store.available)(`kill -9 over ${store.name}`, () => {
    it.scopedLive(
      "under filings and unlocks: after a restart no acknowledged write is lost, nothing exists twice or half",
      () =>
        Effect.gen(function*() {
          const { env, sql } = yield* store.make
          // Eight clients on one address: the rate limit is not what this test is about.
          const deskEnv = { ...env, DESK_RATE_LIMIT: "1000000" }
          const first = yield* startDesk({ env: deskEnv })
          const run = `crash ${randomBytes(4).toString("hex")}`
          const filers = range(3).map(() => newAgentId())
          const buyers = range(12).map(() => newAgentId())
          const acks: Acks = { filings: [], unlocks: [] }
          for (const i of range(4)) {
            const title = `${run} listing ${i}`
            const filer = filers[i % 3]!
            const filed = yield* postJson(
              `${first.url}/api/handoffs`,
              filing(filer, { title, priceUsd: 0.01, reconstructUsd: 1 }),
              {
                headers: { "x-agent-id": filer }
              }
            )
            expect(filed.status).toBe(201)
            acks.filings.push({ id: filed.json.id, title })
          }

          const load = yield* startLoad({
            url: first.url,
            clients: 8,
            run,
            filers,
            buyers,
            handoffs: acks.filings.map((_) => _.id),
            stopOnFailure: true
          })
          yield* Effect.sync(() => load.acks.filings.length + load.acks.unlocks.length).pipe(
            Effect.repeat({ until: (acknowledged) => acknowledged >= 60, schedule: Schedule.spaced("20 millis") }),
            Effect.timeout("60 seconds")
          )
          expect(yield* first.stop("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" })
          yield* load.stop
          acks.filings.push(...load.acks.filings)
          acks.unlocks.push(...load.acks.unlocks)
          // The kill landed mid-load: some requests were cut off without an answer.
          expect(load.answers.some((_) => _.status === 0)).toBe(true)
          expect(load.answers.filter((_) => _.status >= 500)).toEqual([])

          const second = yield* startDesk({ env: deskEnv, port: first.port })
          expect(yield* lostAcks(second.url, acks)).toEqual([])
          const listed = yield* catalogSize(second.url)
          expect(yield* second.stop("SIGTERM")).toEqual({ code: 0, signal: null })

          const [violations, counts] = yield* Effect.all([
            bookViolations,
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql`SELECT
            (SELECT count(*)::int FROM handoffs WHERE title LIKE ${`${run} %`}) AS filings,
            (SELECT count(*)::int FROM handoffs) AS handoffs,
            (SELECT count(*)::int FROM receipts WHERE payer IN ${sql.in(buyers)}) AS receipts`)
          ]).pipe(Effect.provide(sql), Effect.orDie)
          expect(violations).toEqual({})
          // A graceful stop keeps every handoff the restarted desk listed (issue #2).
          expect(counts[0]!.handoffs).toBe(listed)
          // Whatever was in flight at the kill is there whole or not at all: at most one write per client.
          const receipts = new Set(acks.unlocks.map((_) => `${_.buyer} ${_.handoff}`)).size
          expect(counts[0]!.filings).toBeGreaterThanOrEqual(acks.filings.length)
          expect(counts[0]!.filings).toBeLessThanOrEqual(acks.filings.length + 8)
          expect(counts[0]!.receipts).toBeGreaterThanOrEqual(receipts)
          expect(counts[0]!.receipts).toBeLessThanOrEqual(receipts + 8)
        }),
      300_000
    )
  })
}
