import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { bookViolations } from "../support/Books.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { loopbackAddress, loopbackRangeUsable, postJson, send } from "../support/Loopback.ts"
import { type DeskProcess, startDesk } from "../support/Process.ts"
import { REDIS_URL, redisUp } from "../support/Redis.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

class Two extends Context.Tag("test/TwoDesks/Two")<Two, {
  readonly desks: readonly [DeskProcess, DeskProcess]
  /** In the URL the desks were given (PostgreSQL trusts local connections here, so it is never checked). */
  readonly password: string
}>() {}

const TwoLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const databaseUrl = yield* freshDatabaseUrl(DATABASE_URL!)
    const password = `pg-canary-${randomBytes(8).toString("hex")}`
    const withPassword = new URL(databaseUrl)
    withPassword.password = password
    // 20 unlocks at once from one address are the point of a test here, not the per-client cap.
    const env = { DATABASE_URL: withPassword.toString(), REDIS_URL, DESK_CLIENT_CONCURRENCY: "20" }
    // Started together, as replicas are: both run the migrations against the same empty database.
    const desks = yield* Effect.all([startDesk({ env }), startDesk({ env })], { concurrency: 2 })
    return Layer.merge(Layer.succeed(Two, { desks, password }), Postgres.layer(Redacted.make(databaseUrl)))
  })
)

const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const remainingOf = (header: unknown) => Number(/;r=(\d+);/.exec(String(header))?.[1])

// Needs DATABASE_URL and a Redis on 127.0.0.1:6379 (both started by .ci/run), and the whole 127.0.0.0/8 range
// (budgets are per address: each test sends from a fresh one); without them it is reported as skipped.
describe.skipIf(DATABASE_URL === undefined || !redisUp || !loopbackRangeUsable)("two desk processes", () => {
  layer(TwoLive, { excludeTestServices: true, timeout: "180 seconds" })("on one PostgreSQL and one Redis", (it) => {
    it.effect("share one rate budget: the 181st request in 60 seconds is a 429 on either desk", () =>
      Effect.gen(function*() {
        const { desks } = yield* Two
        const from = loopbackAddress()
        const started = Date.now()
        const passed = yield* Effect.forEach(range(180), (i) => send(`${desks[i % 2]!.url}/api/status`, { from }), {
          concurrency: 6
        })
        expect(passed.map((_) => _.status)).toEqual(range(180).map(() => 200))
        expect(passed.map((_) => remainingOf(_.headers.ratelimit)).sort((a, b) => a - b)).toEqual(range(180))
        for (const desk of desks) {
          const refused = yield* send(`${desk.url}/api/status`, {
            from,
            headers: { "x-forwarded-for": loopbackAddress() }
          })
          expect(refused.status).toBe(429)
          expect(refused.json).toMatchObject({ ok: false, error: "rate_limited" })
          const retryAfter = Number(refused.headers["retry-after"])
          expect(retryAfter).toBeGreaterThanOrEqual(Math.floor(60 - (Date.now() - started) / 1000))
          expect(retryAfter).toBeLessThanOrEqual(60)
        }
      }))

    it.effect("20 concurrent unlocks of one handoff by one identity, split across both, give exactly one receipt", () =>
      Effect.gen(function*() {
        const { desks } = yield* Two
        const filer = newAgentId()
        const buyer = newAgentId()
        const filed = yield* postJson(`${desks[0].url}/api/handoffs`, filing(filer, { priceUsd: 0.25 }), {
          headers: { "x-agent-id": filer }
        })
        expect(filed.status).toBe(201)
        const unlocks = yield* Effect.forEach(
          range(20),
          (i) =>
            postJson(`${desks[i % 2]!.url}/api/handoffs/${filed.json.id}/unlock`, { payer: buyer }, {
              headers: { "x-agent-id": buyer }
            }),
          { concurrency: "unbounded" }
        )
        expect(unlocks.map((_) => _.status)).toEqual(range(20).map(() => 200))
        expect(unlocks.filter((_) => !_.json.alreadyUnlocked)).toHaveLength(1)
        expect(new Set(unlocks.map((_) => _.json.receipt.receiptId)).size).toBe(1)

        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql`SELECT
          (SELECT count(*)::int FROM receipts WHERE payer = ${buyer}) AS receipts,
          (SELECT s.sales FROM handoffs h JOIN handoff_sales s ON s.handoff_seq = h.seq
            WHERE h.hash = ${filed.json.hash} AND h.filer_did = ${filer}) AS purchases,
          (SELECT spent_micro::int FROM agents WHERE id = ${buyer}) AS spent`.pipe(Effect.orDie)
        expect(row).toEqual({ receipts: 1, purchases: 1, spent: 250_000 })
        expect(yield* bookViolations).toEqual({})
      }))

    it.effect("filings on both desks at once get distinct ids, each visible from the other desk", () =>
      Effect.gen(function*() {
        const { desks } = yield* Two
        const run = randomBytes(4).toString("hex")
        const filed = yield* Effect.forEach(
          range(20),
          (i) => {
            const filer = newAgentId()
            return postJson(
              `${desks[i % 2]!.url}/api/handoffs`,
              filing(filer, { title: `replica ${run} filing ${i}` }),
              {
                headers: { "x-agent-id": filer }
              }
            )
          },
          { concurrency: "unbounded" }
        )
        expect(filed.map((_) => _.status)).toEqual(range(20).map(() => 201))
        expect(new Set(filed.map((_) => _.json.id)).size).toBe(20)
        for (const [i, reply] of filed.entries()) {
          const seen = yield* send(`${desks[(i + 1) % 2]!.url}/api/handoffs/${reply.json.id}`)
          expect(seen.json.title).toBe(`replica ${run} filing ${i}`)
        }
        expect(yield* bookViolations).toEqual({})
      }))

    it.effect("a change through one desk is in the other desk's next preview read (its cache is invalidated)", () =>
      Effect.gen(function*() {
        const { desks } = yield* Two
        const [a, b] = desks
        const filer = newAgentId()
        const filed = yield* postJson(`${a.url}/api/handoffs`, filing(filer, { priceUsd: 0.01 }), {
          headers: { "x-agent-id": filer }
        })
        expect(filed.status).toBe(201)
        const preview = `${b.url}/api/handoffs/${filed.json.id}`
        // The cache serves once its listener answered its first ping (about a second after start).
        yield* Effect.sleep("2500 millis")
        for (const i of range(15)) {
          // Read twice on B so the second read is a cache hit, then change through A and read B at once.
          yield* send(preview)
          expect((yield* send(preview)).json.purchases).toBe(i)
          const buyer = newAgentId()
          const unlocked = yield* postJson(`${a.url}/api/handoffs/${filed.json.id}/unlock`, { payer: buyer }, {
            headers: { "x-agent-id": buyer }
          })
          expect(unlocked.status).toBe(200)
          expect((yield* send(preview)).json.purchases).toBe(i + 1)
        }
      }))

    it.effect("neither desk logs the database password", () =>
      Effect.gen(function*() {
        const { desks, password } = yield* Two
        for (const desk of desks) {
          expect(desk.logs().length).toBeGreaterThan(0)
          expect(desk.output()).not.toContain(password)
        }
      }))
  })
})
