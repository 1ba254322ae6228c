import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { deskBehindDelayProxy } from "../support/DelayProxy.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { postJson, send } from "../support/Loopback.ts"
import { DATABASE_URL } from "../support/Storage.ts"

// A PostgreSQL that keeps its connections open but stops answering (a partition, a stalled server). Needs
// DATABASE_URL; skipped without it.
describe.skipIf(DATABASE_URL === undefined)("a database that stops answering", () => {
  it.scopedLive(
    "/api/health answers 503 with Retry-After within about two seconds, every time, and 200 once it answers again",
    () =>
      Effect.gen(function*() {
        const { desk, proxy } = yield* deskBehindDelayProxy()
        expect((yield* send(`${desk.url}/api/health`, { fresh: true })).status).toBe(200)

        proxy.setDelay(120_000)
        for (let i = 0; i < 3; i++) {
          const started = Date.now()
          const reply = yield* send(`${desk.url}/api/health`, { fresh: true })
          const took = Date.now() - started
          expect(reply.status).toBe(503)
          expect(reply.json).toMatchObject({ ok: false, error: "unavailable" })
          expect(reply.headers["retry-after"]).toBe("5")
          expect(took).toBeGreaterThanOrEqual(1_900)
          expect(took).toBeLessThan(3_500)
        }

        // Answering again, it is healthy again at once: no probe sent to the silent server holds back the next.
        proxy.setDelay(0)
        const again = yield* send(`${desk.url}/api/health`, { fresh: true })
        expect(again.status).toBe(200)
      }),
    60_000
  )

  /**
   * A desk (statement timeout 1 s) whose preview of DESK-1 is read `readsBefore` times, then read once its database
   * has gone silent: that read must answer 503 `unavailable` within `withinMs`, and the next, once the database
   * answers again, 200 (not held behind the lost one).
   */
  const lostThenBack = (options: { readonly readsBefore: number; readonly withinMs: number }) =>
    Effect.gen(function*() {
      const { desk, proxy } = yield* deskBehindDelayProxy({ DESK_STATEMENT_TIMEOUT_MS: "1000" })
      const preview = `${desk.url}/api/handoffs/DESK-1`
      // The cache keeps a preview once its listener has been heard (its first ping) and from the second read on.
      if (options.readsBefore > 1) yield* Effect.sleep("1500 millis")
      for (let i = 0; i < options.readsBefore; i++) expect((yield* send(preview, { fresh: true })).status).toBe(200)

      proxy.setDelay(120_000)
      const started = Date.now()
      const lost = yield* send(preview, { fresh: true })
      expect(lost.status).toBe(503)
      expect(lost.json).toMatchObject({ ok: false, error: "unavailable" })
      expect(Date.now() - started).toBeLessThan(options.withinMs)

      proxy.setDelay(0)
      expect((yield* send(preview, { fresh: true })).status).toBe(200)
    })

  it.scopedLive(
    "a preview read sent to the silent database answers 503 within the statement timeout and a grace, and the next " +
      "read, once the database answers again, is not held behind it",
    // The statement timeout (1 s) and the grace after it (2 s) for a database that does not even cancel; reads
    // boarding one statement: the next batch departs although the silent one never landed.
    () => lostThenBack({ readsBefore: 1, withinMs: 5_000 }),
    60_000
  )

  it.scopedLive(
    "a filing and an unlock sent to the silent database answer 503 within the statement timeout and a grace, and " +
      "sent again once it answers, each is done once",
    () =>
      Effect.gen(function*() {
        const { desk, proxy } = yield* deskBehindDelayProxy({ DESK_STATEMENT_TIMEOUT_MS: "1000" })
        const [filer, buyer] = [newAgentId(), newAgentId()]
        const listed = yield* postJson(`${desk.url}/api/handoffs`, filing(filer), { headers: { "x-agent-id": filer } })
        expect(listed.status).toBe(201)
        const id = (listed.json as { id: string }).id
        const writes = {
          file: postJson(`${desk.url}/api/handoffs`, filing(filer, { title: "Written while the database was away" }), {
            headers: { "x-agent-id": filer },
            fresh: true
          }),
          unlock: postJson(`${desk.url}/api/handoffs/${id}/unlock`, { payer: buyer }, {
            headers: { "x-agent-id": buyer },
            fresh: true
          })
        }

        proxy.setDelay(120_000)
        for (const [name, write] of Object.entries(writes)) {
          const started = Date.now()
          const lost = yield* write
          expect([name, lost.status, lost.json]).toMatchObject([name, 503, { ok: false, error: "unavailable" }])
          expect(lost.headers["retry-after"]).toBe("5")
          // The statement timeout (1 s) and the grace (2 s), with room for a connection the pool opens anew.
          expect(Date.now() - started, name).toBeLessThan(6_000)
        }

        proxy.setDelay(0)
        const filed = yield* writes.file
        expect(filed.status).toBe(201)
        const unlocked = yield* writes.unlock
        expect(unlocked.status).toBe(200)
        const receipts = yield* send(`${desk.url}/api/receipts?payer=${buyer}`)
        expect((receipts.json as { total: number }).total).toBe(1)
        expect((yield* send(`${desk.url}/api/handoffs/${id}/body`, { headers: { "x-agent-id": buyer } })).status)
          .toBe(200)
      }),
    60_000
  )

  it.scopedLive(
    "a preview held in the cache, read from the silent database, answers 503 as an uncached one does: its barrier " +
      "gives up at its second, not when its statement's cancellation does",
    // The barrier (1 s), then the read itself: the statement timeout (1 s) and its grace (2 s). Waiting for the
    // barrier statement's cancellation, which a silent server never confirms, took 9 s.
    () => lostThenBack({ readsBefore: 4, withinMs: 6_000 }),
    60_000
  )
})
