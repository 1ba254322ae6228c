import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { loadCatalog, loadedCatalog, markerOf } from "../../bench/Load.ts"
import { migrated } from "../../src/Sql.ts"

const HANDOFFS = 12

describe("a bench catalog", () => {
  layer(migrated(Pglite.layer({})))((it) => {
    it.effect("is reused only until a run writes to it: a filing or an identity (every receipt names one)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* loadCatalog(1, HANDOFFS)
        expect(yield* loadedCatalog(HANDOFFS)).toEqual({ marker: markerOf(1, HANDOFFS), untouched: true })
        // Loaded with the indexes dropped, the tag listing holds every tag of every handoff, its indexes rebuilt.
        const [listing] = yield* sql<{ readonly listed: number; readonly tagged: number; readonly indexes: number }>`
          SELECT (SELECT count(*)::int FROM tag_listing) AS listed,
            (SELECT count(*)::int FROM handoffs, unnest(tags) WHERE NOT is_demo) AS tagged,
            (SELECT count(*)::int FROM pg_indexes WHERE tablename = 'tag_listing') AS indexes`
        expect(listing!.listed).toBeGreaterThan(HANDOFFS)
        expect([listing!.listed, listing!.indexes]).toEqual([listing!.tagged, 2])
        // The demo packet the desk files at start is not one of the bench's.
        yield* sql`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro, reconstruct_micro,
            tags, contains, does_not_contain, why_pay, hash, body_chars, origin, is_demo)
          SELECT title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, tags, contains,
            does_not_contain, why_pay, hash || '-demo', body_chars, origin, true FROM handoffs LIMIT 1`
        expect((yield* loadedCatalog(HANDOFFS)).untouched).toBe(true)
        // A catalog of another size is not this one, whatever it holds.
        expect((yield* loadedCatalog(HANDOFFS + 1)).untouched).toBe(false)

        yield* sql`INSERT INTO agents (id) VALUES ('did:desk:00000000000000000000000000000001')`
        expect((yield* loadedCatalog(HANDOFFS)).untouched).toBe(false)
        yield* sql`DELETE FROM agents`
        expect((yield* loadedCatalog(HANDOFFS)).untouched).toBe(true)

        yield* sql`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro, reconstruct_micro,
            tags, contains, does_not_contain, why_pay, hash, body_chars, origin)
          SELECT title, teaser, body, filer, filer_did, price_micro, reconstruct_micro, tags, contains,
            does_not_contain, why_pay, hash || '-filed', body_chars, origin FROM handoffs WHERE NOT is_demo LIMIT 1`
        expect((yield* loadedCatalog(HANDOFFS)).untouched).toBe(false)
      }))
  })
})
