import type { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { delayProxy } from "../support/DelayProxy.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"
import { unannounced, untilCached } from "../support/Unannounced.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

/**
 * How late desk B hears everything its database sends it, its change announcements included: longer than the
 * quick first pings of a starting cache wait (250 ms), so B caches only if they wait longer after a miss.
 */
const LATE_MS = 300

// The cache exists only where desks share a PostgreSQL server (PGlite is one desk's own store, never cached).
describe.skipIf(process.env.DESK_TEST_STORE !== "postgres" || DATABASE_URL === undefined)(
  "the preview cache across desks",
  () => {
    it.live(
      "a desk that hears its database 300 ms late still caches, and its read right after a change through another desk is fresh",
      () =>
        Effect.gen(function*() {
          const url = new URL(yield* freshDatabaseUrl(DATABASE_URL!))
          const proxy = yield* delayProxy({ host: url.hostname, port: Number(url.port || 5432) }, LATE_MS)
          const late = new URL(url)
          late.hostname = "127.0.0.1"
          late.port = String(proxy.port)
          const a = yield* Layer.build(servicesOn(Postgres.layer(Redacted.make(url.toString()))))
          const b = yield* Layer.build(servicesOn(Postgres.layer(Redacted.make(late.toString()))))
          const onA = <X, E>(effect: Effect.Effect<X, E, Catalog | Ledger | SqlClient.SqlClient>) =>
            Effect.provide(effect, a)
          const readB = (id: string) => Effect.provide(Effect.flatMap(Catalog, (_) => _.get(id)), b)

          const filer = DeskId.make(newAgentId())
          const filed = yield* onA(Effect.flatMap(Catalog, (_) => _.file(filer, decodeFiling(filing(filer)))))
          const seq = Number(filed.id.replace("DESK-", ""))

          // B serves from its cache once its listener answers: a title changed unannounced stays hidden from it then.
          const cached = yield* untilCached(readB(filed.id), (title) => onA(unannounced(seq, title)))
          expect(cached).toBe(true)

          for (let i = 0; i < 5; i++) {
            yield* readB(filed.id)
            const buyer = DeskId.make(newAgentId())
            yield* onA(Effect.flatMap(Ledger, (_) => _.unlock(buyer, filed.id, buyer, Option.none())))
            expect((yield* readB(filed.id)).purchases).toBe(i + 1)
          }
        }).pipe(Effect.scoped),
      120_000
    )
  }
)
