import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { agentWithHistory } from "../support/AgentHistory.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

// Test-side reading of the JSON answer, asserted field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const agentJson = (id: string) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(`/agents/${id}`)
      return { status: response.status, vary: response.headers.get("vary"), json: (await readJson(response)) as Json }
    }))

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`an agent's page over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("tells its owner what it bought, earned and spent, and when", () =>
        Effect.gen(function*() {
          const { agent, day, other, own, theirs } = yield* agentWithHistory
          const { json: view, status, vary } = yield* agentJson(agent)
          expect([status, vary]).toEqual([200, "Accept"])
          expect(view).toMatchObject({
            ok: true,
            id: agent,
            payoutAddress: null,
            spend: { capUsd: 10, spentUsd: 2.450001, leftUsd: 7.549999, purchases: 3 },
            // 90 % of 1.2 + 0.3 + 1.2 + 0.3, none of it on-chain: this desk has no chain.
            earnings: { sales: 4, totalUsd: 2.7, onChainUsd: 0 },
            filings: { total: 2 },
            purchases: { total: 4 }
          })
          expect(view.earnings.owedUsd + view.earnings.ledgerUsd).toBeCloseTo(2.7, 6)
          expect(view.filings.items.map((_: Json) => [_.id, _.sales, _.earnedUsd])).toEqual([[own[1], 2, 0.54], [
            own[0],
            2,
            2.16
          ]])
          expect(view.purchases.items.map((_: Json) => [_.handoffId, _.kind])).toEqual([
            [expect.stringMatching(/^DESK-\d+$/), "demo"],
            ...[...theirs].reverse().map((id) => [id, "sale"])
          ])
          expect(view.purchases.items[1]).toMatchObject({
            filer: "platypus-bot",
            filerDid: other,
            priceUsd: 0.000001,
            mode: "desk"
          })
          expect(view.activity).toEqual([
            { day: day(6), spentUsd: 0.45, earnedUsd: 0 },
            { day: day(5), spentUsd: 0, earnedUsd: 1.08 },
            { day: day(4), spentUsd: 0, earnedUsd: 0.27 },
            { day: day(3), spentUsd: 2, earnedUsd: 0 },
            { day: day(2), spentUsd: 0, earnedUsd: 1.08 },
            { day: day(1), spentUsd: 0.000001, earnedUsd: 0 },
            { day: day(0), spentUsd: 0, earnedUsd: 0.27 }
          ])
          // Its seller, known only by its filings, has a page too; a buyer it sold to is never named.
          const seller = yield* agentJson(other)
          expect(seller.json.earnings).toMatchObject({ sales: 3 })
          expect(JSON.stringify(seller.json)).not.toContain(agent)
        }))

      it.effect("the filer of the demo packet and of a seeded listing, who never called, has a page too", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const catalog = yield* Catalog
          const seededBy = newAgentId()
          const seeded = yield* catalog.seed(Schema.decodeUnknownSync(FilingRequest)(filing(seededBy)))
          for (const id of ["DESK-1", seeded.id]) {
            const html = yield* Effect.promise(() =>
              desk.request(`/h/${id}`, { headers: { accept: "text/html" } }).then((r) => r.text())
            )
            const links = [...html.matchAll(/href="\/agents\/([^"]+)"/g)].map((m) => m[1]!)
            expect(links.length, id).toBeGreaterThan(0)
            for (const agent of links) {
              const page = yield* agentJson(agent)
              // The demo packet is left out of its filer's filings, as it is out of every listing.
              expect([page.status, page.json.filings.total], `${id} -> ${agent}`).toEqual([
                200,
                id === "DESK-1" ? 0 : 1
              ])
              const api = yield* Effect.promise(() => desk.request(`/api/agents/${agent}`))
              expect(api.status, `/api/agents/${agent}`).toBe(200)
            }
          }
          expect((yield* agentJson(seededBy)).status).toBe(200)
        }))

      it.effect("an id the desk never saw, or a malformed one, is a 404 not_found", () =>
        Effect.gen(function*() {
          for (const id of [newAgentId(), "did:desk:NOPE", "DESK-1"]) {
            const { json, status } = yield* agentJson(id)
            expect([status, json.error], id).toEqual([404, "not_found"])
          }
        }))
    })
  })
}
