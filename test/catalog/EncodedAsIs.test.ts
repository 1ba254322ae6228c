import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { CatalogResponse, DiscoverResponse } from "../../src/Catalog/Responses.ts"
import { Preview } from "../../src/Domain/Preview.ts"
import { BodyResponse, UnlockResponse } from "../../src/Domain/Receipt.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

/** The body decodes under its contract schema, and encoding it back changes nothing: skipping the encode is sound. */
const roundTrips = <A, I>(schema: Schema.Schema<A, I>, json: unknown) =>
  expect(Schema.encodeSync(schema)(Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(json))).toEqual(json)

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`responses sent without a schema walk over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("preview, discover and catalog bodies are exactly their contract's encoding", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const get = (path: string) => Effect.promise(() => desk.request(path).then(readJson))
          const agent = newAgentId()
          const flagged = { priceUsd: 0.01, reconstructUsd: 50, provenance: null }
          for (const fields of [{}, flagged]) {
            const response = yield* Effect.promise(() =>
              desk.request("/api/handoffs", { json: filing(agent, fields), agent })
            )
            expect(response.status).toBe(201)
          }
          const discover = yield* get("/api/discover?limit=1&sort=price&maxPrice=5")
          expect(discover.items).toHaveLength(1)
          expect(discover.next).not.toBeNull()
          roundTrips(DiscoverResponse, discover)
          roundTrips(CatalogResponse, yield* get("/api/handoffs"))
          for (const item of (yield* get("/api/discover?include=demo")).items) {
            roundTrips(Preview, yield* get(`/api/handoffs/${item.id}`))
          }
        }))

      it.effect("unlock and body bodies are exactly their contract's encoding, first unlock and repeat", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const filer = newAgentId()
          const filed = yield* Effect.promise(() =>
            desk.request("/api/handoffs", { json: filing(filer, {}), agent: filer }).then(readJson)
          )
          const buyer = newAgentId()
          for (const repeat of [false, true]) {
            const unlocked = yield* Effect.promise(() =>
              desk.request(`/api/handoffs/${filed.id}/unlock`, { json: { payer: buyer }, agent: buyer }).then(readJson)
            )
            expect(unlocked.alreadyUnlocked).toBe(repeat)
            roundTrips(UnlockResponse, unlocked)
          }
          const body = yield* Effect.promise(() =>
            desk.request(`/api/handoffs/${filed.id}/body`, { agent: buyer }).then(readJson)
          )
          expect(body.id).toBe(filed.id)
          roundTrips(BodyResponse, body)
        }))
    })
  })
}
