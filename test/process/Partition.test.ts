import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cuttableProxy } from "../support/CuttableProxy.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { postJson, send } from "../support/Loopback.ts"
import { startDesk } from "../support/Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

const COMMIT = Buffer.from("COMMIT\0")

/**
 * A proxy where, once armed, the first connection that sends COMMIT is partitioned: that COMMIT and every later
 * byte, both ways, are dropped, and its close never reaches the server (the FIN is lost too). Every other
 * connection passes as usual.
 */
const partitionProxy = (target: { host: string; port: number }) =>
  Effect.gen(function*() {
    let armed = false
    let cutCount = 0
    const proxy = yield* cuttableProxy(target, (chunk, link) => {
      if (armed && chunk.includes(COMMIT)) {
        armed = false
        link.cut = true
        cutCount++
      }
    })
    return {
      port: proxy.port,
      arm: () => {
        armed = true
      },
      cut: () => cutCount
    }
  })

describe.skipIf(DATABASE_URL === undefined)("a partition that cuts a transaction before its COMMIT", () => {
  it.scopedLive(
    "the filer's next filing, with the link back, is answered 201 (not locked out by the orphan)",
    () =>
      Effect.gen(function*() {
        const url = new URL(yield* freshDatabaseUrl(DATABASE_URL!))
        const proxy = yield* partitionProxy({ host: url.hostname, port: Number(url.port || "5432") })
        url.hostname = "127.0.0.1"
        url.port = String(proxy.port)
        const desk = yield* startDesk({ env: { DESK_STATEMENT_TIMEOUT_MS: "1000", DATABASE_URL: url.toString() } })
        const filer = newAgentId()
        expect(
          (yield* postJson(`${desk.url}/api/handoffs`, filing(filer), { headers: { "x-agent-id": filer } })).status
        )
          .toBe(201)

        proxy.arm()
        const started = Date.now()
        const lost = yield* postJson(`${desk.url}/api/handoffs`, filing(filer, { title: "Cut before its COMMIT" }), {
          headers: { "x-agent-id": filer },
          fresh: true
        })
        const took = Date.now() - started
        expect([proxy.cut(), lost.status, took < 6_000]).toEqual([1, 503, true])

        // Every other connection works; the desk is healthy.
        expect((yield* send(`${desk.url}/api/health`, { fresh: true })).status).toBe(200)
        const statuses: Array<number> = []
        for (let i = 0; i < 3; i++) {
          yield* Effect.sleep("2 seconds")
          const next = yield* postJson(`${desk.url}/api/handoffs`, filing(filer, { title: `After the cut ${i}` }), {
            headers: { "x-agent-id": filer },
            fresh: true
          })
          statuses.push(next.status)
        }
        expect(statuses).toEqual([201, 201, 201])
      }),
    90_000
  )
})
