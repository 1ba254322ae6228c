import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cuttableProxy, type Link } from "../support/CuttableProxy.ts"
import { send } from "../support/Loopback.ts"
import { startDesk } from "../support/Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

const LISTEN = Buffer.from("LISTEN \"handoff_changed\"")

/**
 * A proxy that counts the connections that sent LISTEN on the preview cache's channel and, on `cut`, cuts those so
 * far for good, without closing them (a partition, or a NAT that lost them). Later connections pass as usual.
 */
const listenerProxy = (target: { host: string; port: number }) =>
  Effect.gen(function*() {
    const listening: Array<Link> = []
    const proxy = yield* cuttableProxy(target, (chunk, link) => {
      if (chunk.includes(LISTEN) && !listening.includes(link)) listening.push(link)
    })
    return {
      port: proxy.port,
      listens: () => listening.length,
      cut: () => {
        for (const link of listening) link.cut = true
      }
    }
  })

describe.skipIf(DATABASE_URL === undefined)("a partition that cuts the preview cache's LISTEN connection", () => {
  it.scopedLive(
    "the desk listens again on a new connection, instead of waiting for the silent one's UNLISTEN",
    () =>
      Effect.gen(function*() {
        const url = new URL(yield* freshDatabaseUrl(DATABASE_URL!))
        const proxy = yield* listenerProxy({ host: url.hostname, port: Number(url.port || "5432") })
        url.hostname = "127.0.0.1"
        url.port = String(proxy.port)
        const desk = yield* startDesk({ env: { DATABASE_URL: url.toString() } })
        const listening = (count: number, seconds: number) =>
          Effect.gen(function*() {
            for (let waited = 0; waited < seconds * 10 && proxy.listens() < count; waited++) {
              yield* Effect.sleep("100 millis")
            }
            return proxy.listens()
          })
        expect(yield* listening(1, 10)).toBe(1)

        proxy.cut()
        // The cache misses its pings (about 14 s of them) and restarts its listener: on a new connection.
        expect(yield* listening(2, 40)).toBe(2)
        expect((yield* send(`${desk.url}/api/health`, { fresh: true })).status).toBe(200)
      }),
    90_000
  )
})
