import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { statementNames } from "../../adapters/storage/PreparedStatements.ts"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { PREPARED } from "../../src/Storage.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

describe("prepared statement names", () => {
  it("names only marked statements, the same text alike every time, and no more texts than the limit", () => {
    const nameOf = statementNames(2)
    expect(nameOf("SELECT 1")).toBeUndefined()
    const first = nameOf(`${PREPARED} SELECT seq FROM handoffs WHERE seq = $1`)
    expect(first).toMatch(/^desk_[0-9a-f]{24}$/)
    expect(nameOf(`${PREPARED} SELECT seq FROM handoffs WHERE seq = $1`)).toBe(first)
    // Another process names the same text alike: names depend on the text only.
    expect(statementNames(2)(`${PREPARED} SELECT seq FROM handoffs WHERE seq = $1`)).toBe(first)
    const second = nameOf(`${PREPARED} SELECT title FROM handoffs WHERE seq = $1`)
    expect(second).toMatch(/^desk_/)
    expect(second).not.toBe(first)
    // Past the limit a new text runs unnamed; the ones named already keep their names.
    expect(nameOf(`${PREPARED} SELECT teaser FROM handoffs WHERE seq = $1`)).toBeUndefined()
    expect(nameOf(`${PREPARED} SELECT seq FROM handoffs WHERE seq = $1`)).toBe(first)
  })
})

/** Domain services on a throw-away database through one pooled connection, so its session state can be read. */
const oneConnection = (settings: ReadonlyArray<[string, string]>) =>
  Effect.flatMap(freshDatabaseUrl(DATABASE_URL!), (url) =>
    Layer.build(
      servicesOn(
        Postgres.layer(Redacted.make(url)).pipe(
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DESK_DB_POOL", "1"], ...settings]))))
        )
      )
    ))

/** A filing, two reads of its preview, an unlock by a buyer and the buyer's read of the body. */
const sale = Effect.gen(function*() {
  const catalog = yield* Catalog
  const ledger = yield* Ledger
  const filer = DeskId.make(newAgentId())
  const filed = yield* catalog.file(filer, decodeFiling(filing(filer)))
  yield* catalog.get(filed.id)
  yield* catalog.get(filed.id)
  const buyer = DeskId.make(newAgentId())
  yield* ledger.unlock(buyer, filed.id, buyer, Option.none())
  const read = yield* ledger.body(filed.id, Option.some(buyer))
  return { filed, body: read.body, preview: yield* catalog.get(filed.id) }
})

const preparedOnTheConnection = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`
)

describe.skipIf(process.env.DESK_TEST_STORE !== "postgres" || DATABASE_URL === undefined)(
  "prepared statements on PostgreSQL",
  () => {
    it.live(
      "the preview, unlock and body statements run prepared, and answer as unprepared ones do",
      () =>
        Effect.gen(function*() {
          const desk = yield* oneConnection([])
          const { body, filed, preview } = yield* Effect.provide(sale, desk)
          expect(body.length).toBeGreaterThan(0)
          expect(preview.purchases).toBe(1)
          expect(preview.title).toBe(filed.title)

          const prepared = yield* Effect.provide(preparedOnTheConnection, desk)
          const nameOf = statementNames()
          for (const { name, statement } of prepared) {
            expect(statement.startsWith(PREPARED)).toBe(true)
            expect(nameOf(statement)).toBe(name)
          }
          const texts = prepared.map((_) => _.statement)
          expect(texts.some((_) => /FROM handoffs WHERE seq = ANY\(\$1::bigint\[\]\)$/.test(_))).toBe(true)
          expect(texts.some((_) => _.includes("desk_unlock_batch("))).toBe(true)
          expect(texts.some((_) => _.includes("THEN h.body END AS body"))).toBe(true)
          // The filing's insert is not among them: it is not marked.
          expect(texts.some((_) => _.includes("INSERT INTO handoffs"))).toBe(false)
        }).pipe(Effect.scoped),
      60_000
    )

    it.live("DESK_PG_PREPARE=false prepares nothing", () =>
      Effect.gen(function*() {
        const desk = yield* oneConnection([["DESK_PG_PREPARE", "false"]])
        const { preview } = yield* Effect.provide(sale, desk)
        expect(preview.purchases).toBe(1)
        expect(yield* Effect.provide(preparedOnTheConnection, desk)).toEqual([])
      }).pipe(Effect.scoped), 60_000)

    it.live(
      "a prepared read still answers after another desk changed the table under it (a newer desk's migration)",
      () =>
        Effect.gen(function*() {
          const desk = yield* oneConnection([])
          yield* Effect.provide(sale, desk)
          yield* Effect.provide(
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE handoffs ADD COLUMN later_column integer`),
            desk
          )
          // A new handoff: its preview is not cached, so the prepared statements run again, planned anew.
          const { body, filed, preview } = yield* Effect.provide(sale, desk)
          expect(body.length).toBeGreaterThan(0)
          expect(preview.title).toBe(filed.title)
          expect(preview.purchases).toBe(1)
        }).pipe(Effect.scoped),
      60_000
    )
  }
)
