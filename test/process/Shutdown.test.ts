import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, type Scope } from "effect"
import { connect, type Socket } from "node:net"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { type DeskProcess, startDesk, tempDataDir } from "../support/Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/** A filing sent as raw HTTP: the socket, a way to send the rest of the body, and the answer's status line. */
const halfSent = (port: number, agent: string) => {
  const body = JSON.stringify(filing(agent))
  const socket: Socket = connect({ host: "127.0.0.1", port })
  let received = ""
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk))
  const answered = new Promise<string>((resolve) => {
    socket.on("close", () => resolve(received.split("\r\n")[0] ?? ""))
    socket.on("error", () => resolve(received.split("\r\n")[0] ?? ""))
  })
  const head = [
    "POST /api/handoffs HTTP/1.1",
    "Host: desk",
    "Content-Type: application/json",
    `X-AGENT-ID: ${agent}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close"
  ].join("\r\n")
  const half = Math.floor(body.length / 2)
  socket.write(`${head}\r\n\r\n${body.slice(0, half)}`)
  return { rest: () => socket.write(body.slice(half)), answered }
}

const refusesConnections = (port: number) =>
  Effect.promise(() =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port })
      socket.on("connect", () => {
        socket.destroy()
        resolve(false)
      })
      socket.on("error", () => resolve(true))
    })
  )

const total = (desk: DeskProcess) =>
  Effect.promise(() =>
    fetch(`${desk.url}/api/handoffs?limit=1`).then((response) => response.json() as Promise<{ total: number }>)
  )

/**
 * Told to stop (SIGTERM), the desk stops taking connections and finishes the requests it took before its store
 * closes: a filing whose body is still arriving when the signal comes is filed and answered 201, and kept.
 */
const stopsGracefully = (env: () => Effect.Effect<Record<string, string>, unknown, Scope.Scope>) =>
  Effect.gen(function*() {
    const settings = yield* env()
    const desk = yield* startDesk({ env: settings, startTimeout: "180 seconds" })
    const before = (yield* total(desk)).total
    const filings = Array.from({ length: 5 }, () => halfSent(desk.port, newAgentId()))
    // Their headers are read and their answers begun: in flight.
    yield* Effect.sleep(Duration.millis(500))
    const stopped = yield* Effect.fork(desk.stop("SIGTERM"))
    yield* Effect.sleep(Duration.millis(500))
    expect(yield* refusesConnections(desk.port), "a connection after SIGTERM").toBe(true)
    for (const filing of filings) filing.rest()
    const answers = yield* Effect.promise(() => Promise.all(filings.map((_) => _.answered)))
    expect(answers).toEqual(Array(5).fill("HTTP/1.1 201 Created"))
    expect(yield* stopped.await.pipe(Effect.flatten)).toEqual({ code: 0, signal: null })

    const again = yield* startDesk({ env: settings, port: desk.port, startTimeout: "180 seconds" })
    expect((yield* total(again)).total).toBe(before + 5)
  })

describe("a desk told to stop", () => {
  it.scopedLive(
    "finishes the requests in flight on the embedded store, then exits 0",
    () => stopsGracefully(() => Effect.map(tempDataDir, (dir) => ({ DESK_DATA_DIR: dir }))),
    300_000
  )

  it.scopedLive.skipIf(DATABASE_URL === undefined)(
    "finishes the requests in flight on PostgreSQL, then exits 0",
    () => stopsGracefully(() => Effect.map(freshDatabaseUrl(DATABASE_URL!), (url) => ({ DATABASE_URL: url }))),
    300_000
  )
})
