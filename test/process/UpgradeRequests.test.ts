import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { connect } from "node:net"
import { deskBehindDelayProxy } from "../support/DelayProxy.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { postJson, send } from "../support/Loopback.ts"
import { type DeskProcess, startDesk, tempDataDir } from "../support/Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/**
 * Node hands a request carrying `Connection: Upgrade` + `Upgrade: <anything>` to the server's "upgrade" listeners,
 * if it has any, instead of "request". @effect/platform-node attaches one (for WebSockets); the desk takes it off
 * (src/Http/NodeServer.ts), so such a request goes through everything on the "request" path: the admission turns,
 * the response that writes a long list in parts and cuts slow readers, Node's request timeouts.
 */

interface RawAnswer {
  /** What the desk wrote before the connection closed or the wait ran out. */
  readonly text: string
  /** Whether a whole response (its headers and Content-Length bytes of body) came within the wait. */
  readonly whole: boolean
  readonly ms: number
}

/** One raw HTTP/1.1 request on a connection of its own; waits for a whole response, at most `waitMs`. */
const raw = (port: number, head: string, body: string, waitMs: number) =>
  Effect.async<RawAnswer>((resume) => {
    const started = Date.now()
    let text = ""
    let done = false
    const whole = () => {
      const end = text.indexOf("\r\n\r\n")
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))
      return end >= 0 && length !== null && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])
    }
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed({ text, whole: whole(), ms: Date.now() - started }))
    }
    const socket = connect(port, "127.0.0.1", () => socket.write(head + body))
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      text += chunk
      if (whole()) finish()
    })
    socket.on("close", finish)
    socket.on("error", finish)
    const timer = setTimeout(finish, waitMs)
    return Effect.sync(finish)
  })

const upgradeHead = (method: string, path: string, extra = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: desk\r\nAccept: application/json\r\nConnection: Upgrade\r\nUpgrade: foo\r\n${extra}\r\n`

class Desk extends Context.Tag("test/process/UpgradeRequests/Desk")<Desk, DeskProcess>() {}

const DeskLive = Layer.scoped(
  Desk,
  Effect.gen(function*() {
    const store = DATABASE_URL === undefined
      ? { DESK_DATA_DIR: yield* tempDataDir }
      : { DATABASE_URL: yield* freshDatabaseUrl(DATABASE_URL) }
    return yield* startDesk({
      env: { ...store, DESK_REQUEST_TIMEOUT_SECONDS: "2", DESK_CLIENT_CONCURRENCY: "2", DESK_RATE_LIMIT: "1000" }
    })
  }).pipe(Effect.orDie)
)

describe("requests with an Upgrade header are served as any other", () => {
  layer(DeskLive, { excludeTestServices: true, timeout: "180 seconds" })("a desk", (it) => {
    it.effect(
      "a listing page of more than 32 previews is answered, not left hanging with no response at all",
      () =>
        Effect.gen(function*() {
          const desk = yield* Desk
          const agent = newAgentId()
          // 33 listings: a page of them is a long list, written in parts (src/Http/JsonParts.ts).
          for (let i = 0; i < 33; i++) {
            const filed = yield* postJson(`${desk.url}/api/handoffs`, filing(agent, { title: `Upgrade page ${i}` }), {
              headers: { "x-agent-id": agent }
            })
            expect(filed.status).toBe(201)
          }
          const plain = yield* send(`${desk.url}/api/discover?limit=100`)
          expect(plain.status).toBe(200)
          expect(plain.json.items.length).toBeGreaterThan(32)

          const upgraded = yield* raw(desk.port, upgradeHead("GET", "/api/discover?limit=100"), "", 5_000)
          // Through the platform's upgrade handler nothing was ever written (its plain response cannot end with a
          // body in parts) and the connection was never closed.
          expect({ whole: upgraded.whole, status: upgraded.text.slice(0, 12) }).toEqual({
            whole: true,
            status: "HTTP/1.1 200"
          })
          const body = JSON.parse(upgraded.text.slice(upgraded.text.indexOf("\r\n\r\n") + 4))
          expect(body.items.length).toBe(plain.json.items.length)
        }),
      120_000
    )
  })
})

// Skipped without DATABASE_URL: a delay proxy in front of PostgreSQL makes every read slow enough to count turns.
describe.skipIf(DATABASE_URL === undefined)("DESK_ACTIVE_REQUESTS with an Upgrade header", () => {
  it.scopedLive(
    "reads with `Connection: Upgrade` still take turns: one at a time, as the same reads without it",
    () =>
      Effect.gen(function*() {
        const { desk, proxy } = yield* deskBehindDelayProxy({
          DESK_ACTIVE_REQUESTS: "1",
          DESK_CLIENT_CONCURRENCY: "50",
          DESK_RATE_LIMIT: "1000",
          DESK_PREVIEW_CACHE: "0"
        })
        const DELAY = 400
        const N = 8
        proxy.setDelay(DELAY)
        const batch = (tag: string, headers: (path: string) => string) =>
          Effect.gen(function*() {
            const started = Date.now()
            const answers = yield* Effect.forEach(
              Array.from({ length: N }, (_, i) => `/api/discover?q=${tag}${i}`),
              (path) => raw(desk.port, headers(path), "", 30_000),
              { concurrency: "unbounded" }
            )
            return { ms: Date.now() - started, statuses: answers.map((_) => _.text.slice(0, 12)) }
          })
        // Control: plain reads, one turn, each at least one round trip through the proxy.
        const plain = yield* batch(
          "plain",
          (path) => `GET ${path} HTTP/1.1\r\nHost: desk\r\nAccept: application/json\r\nConnection: close\r\n\r\n`
        )
        expect(plain.statuses).toEqual(Array.from({ length: N }, () => "HTTP/1.1 200"))
        expect(plain.ms).toBeGreaterThanOrEqual(N * DELAY * 0.9)
        // The same reads with an Upgrade header: handed to Node's "upgrade" listener, around src/Http/Admission.ts.
        const upgraded = yield* batch("upgraded", (path) => upgradeHead("GET", path))
        expect(upgraded.statuses).toEqual(Array.from({ length: N }, () => "HTTP/1.1 200"))
        // Through the platform's upgrade handler all 8 were inside the desk at once: one round trip, not 8.
        expect(
          upgraded.ms,
          `${N} upgraded reads took ${upgraded.ms} ms (plain: ${plain.ms} ms), so they did not take turns`
        ).toBeGreaterThanOrEqual(N * DELAY * 0.9)
      }),
    { timeout: 120_000 }
  )
})
