import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { EventEmitter } from "node:events"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import { activeRequestsConfig, admitted, ENDED } from "../../src/Http/Admission.ts"
import { makeServer, refuseBusy } from "../../src/Http/NodeServer.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A desk server whose app holds every GET under `/read/`, `/a/`, `/b/` or `/api/handoffs/` it is handed until the test lets it
 * go (`release`) and answers any other at once; it counts how many it holds at a time and the order they came in.
 */
const heldServer = async (active: number, perClient?: number, line?: number) => {
  const server: Server = makeServer({ requestSeconds: 5 }, () => {}, {
    active,
    clientOf: (request) => String(request.headers["x-client"] ?? "anyone"),
    ...(perClient === undefined ? {} : { perClient }),
    ...(line === undefined
      ? {}
      : { line: { size: line, refuse: (response) => refuseBusy(response, perClient ?? 1, line) } })
  })
  const seen: Array<string> = []
  const held: Array<ServerResponse> = []
  let inside = 0
  let mostInside = 0
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    seen.push(request.url!)
    if (request.method !== "GET" || !/^\/(read|a|b|api\/handoffs)\//.test(request.url!)) {
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(JSON.stringify({ url: request.url }))
    }
    inside++
    mostInside = Math.max(mostInside, inside)
    held.push(response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    seen,
    mostInside: () => mostInside,
    heldCount: () => held.length,
    /** Answers the oldest request the app holds. */
    release: (body = "{}") => {
      inside--
      const response = held.shift()!
      response.writeHead(200, { "content-type": "application/json" })
      response.end(body)
    },
    get: (path: string, client = "anyone", init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        ...init,
        headers: { "x-client": client, ...init.headers },
        signal: AbortSignal.timeout(5000)
      }),
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

/** Runs `test` against a fresh held server, closed however the test ends. */
const withDesk = async (
  active: number,
  test: (desk: Awaited<ReturnType<typeof heldServer>>) => Promise<void>,
  perClient?: number,
  line?: number
) => {
  const desk = await heldServer(active, perClient, line)
  try {
    await test(desk)
  } finally {
    await desk.close()
  }
}

/** A GET sent on a raw socket, which the test then leaves unread (`pause`) or closes. */
const rawGet = (port: number, path: string, client: string, pause: boolean) => {
  const socket: Socket = connect({ host: "127.0.0.1", port }, () => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: desk\r\nx-client: ${client}\r\n\r\n`)
    if (pause) socket.pause()
  })
  socket.on("error", () => {})
  return socket
}

/** Waits until `condition` holds, up to two seconds. */
const until = async (condition: () => boolean) => {
  for (let tries = 0; tries < 200 && !condition(); tries++) await sleep(10)
  expect(condition()).toBe(true)
}

describe("admission of reads into the app", () => {
  it("lets at most `active` reads in at once; the others wait and are all answered", () =>
    withDesk(2, async (desk) => {
      const answers = [1, 2, 3, 4, 5, 6].map((n) => desk.get(`/read/${n}`, `client-${n}`))
      await until(() => desk.heldCount() === 2)
      await sleep(100)
      expect(desk.seen).toHaveLength(2)
      for (let answered = 0; answered < 6; answered++) {
        await until(() => desk.heldCount() > 0)
        desk.release()
      }
      expect((await Promise.all(answers)).map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200])
      expect(desk.mostInside()).toBe(2)
    }))

  it("lets reads by key that board a shared statement in at once: previews and bodies, paid or not; listings wait", () =>
    withDesk(1, async (desk) => {
      const answers = [desk.get("/read/1", "a"), desk.get("/read/2", "b")]
      await until(() => desk.heldCount() === 1)
      answers.push(
        desk.get("/api/handoffs/DESK-7", "c"),
        desk.get("/api/handoffs/DESK-7/body", "c"),
        desk.get("/api/handoffs/DESK-8/body?x-payment", "d", { headers: { "x-payment": "payment" } }),
        desk.get("/api/handoffs/DESK-8/body?payment-signature", "d", { headers: { "payment-signature": "payment" } })
      )
      // The catalog's listing (no id) and any other read wait, a payment header or not.
      answers.push(desk.get("/api/handoffs/", "e"), desk.get("/read/3", "f", { headers: { "x-payment": "payment" } }))
      await until(() => desk.heldCount() === 5)
      await sleep(100)
      expect(desk.seen).toEqual([
        "/read/1",
        "/api/handoffs/DESK-7",
        "/api/handoffs/DESK-7/body",
        "/api/handoffs/DESK-8/body?x-payment",
        "/api/handoffs/DESK-8/body?payment-signature"
      ])
      for (let answered = 0; answered < 8; answered++) {
        await until(() => desk.heldCount() > 0)
        desk.release()
      }
      expect((await Promise.all(answers)).map((response) => response.status)).toEqual(Array(8).fill(200))
      expect(desk.seen.slice(5).sort()).toEqual(["/api/handoffs/", "/read/2", "/read/3"])
    }))

  it("lets clients take turns: one client's queue does not keep another waiting behind all of it", () =>
    withDesk(1, async (desk) => {
      const answers = [desk.get("/a/1", "a")]
      await until(() => desk.heldCount() === 1)
      for (const n of [2, 3, 4, 5]) {
        answers.push(desk.get(`/a/${n}`, "a"))
        await sleep(30)
      }
      answers.push(desk.get("/b/1", "b"))
      await sleep(100)
      for (let answered = 0; answered < 6; answered++) {
        await until(() => desk.heldCount() === 1)
        desk.release()
      }
      await Promise.all(answers)
      expect(desk.seen).toEqual(["/a/1", "/a/2", "/b/1", "/a/3", "/a/4", "/a/5"])
    }))

  it("lets one client have at most its cap of reads inside; the rest wait in its line, not on others' turns", () =>
    withDesk(4, async (desk) => {
      const answers = [1, 2, 3, 4, 5].map((n) => desk.get(`/a/${n}`, "a"))
      await until(() => desk.heldCount() === 2)
      await sleep(100)
      // Two turns are free, but not for a: b's read takes one of them at once.
      expect(desk.seen).toEqual(["/a/1", "/a/2"])
      answers.push(desk.get("/b/1", "b"))
      await until(() => desk.heldCount() === 3)
      expect(desk.seen).toEqual(["/a/1", "/a/2", "/b/1"])
      for (let answered = 0; answered < 6; answered++) {
        await until(() => desk.heldCount() > 0)
        desk.release()
      }
      expect((await Promise.all(answers)).map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200])
      expect(desk.seen).toEqual(["/a/1", "/a/2", "/b/1", "/a/3", "/a/4", "/a/5"])
    }, 2))

  it("refuses a client's read past its full line at once (429 rate_limited), leaving the others' turns alone", () =>
    withDesk(
      1,
      async (desk) => {
        const answers = [1, 2, 3].map((n) => desk.get(`/a/${n}`, "a"))
        await until(() => desk.heldCount() === 1)
        await sleep(100)
        // a/1 inside, a/2 and a/3 in a's line of 2: a/4 finds it full.
        const refused = await desk.get("/a/4", "a")
        expect(refused.status).toBe(429)
        expect(refused.headers.get("retry-after")).toBe("1")
        expect(await refused.json()).toMatchObject({ ok: false, error: "rate_limited" })
        answers.push(desk.get("/b/1", "b"))
        await sleep(100)
        for (let answered = 0; answered < 4; answered++) {
          await until(() => desk.heldCount() === 1)
          desk.release()
        }
        expect((await Promise.all(answers)).map((response) => response.status)).toEqual([200, 200, 200, 200])
        expect(desk.seen).toEqual(["/a/1", "/a/2", "/b/1", "/a/3"])
      },
      1,
      2
    ))

  it("ends a turn when the app ends its answer, not when a client that never reads has read it", () =>
    withDesk(1, async (desk) => {
      const reader = rawGet(desk.port, "/read/big", "slow", true)
      try {
        await until(() => desk.heldCount() === 1)
        // 64 MiB: far more than the kernel buffers take, so the answer stays unread in the server for seconds.
        desk.release("x".repeat(64 * 1024 * 1024))
        const next = desk.get("/read/next", "quick")
        await until(() => desk.heldCount() === 1)
        desk.release()
        expect((await next).status).toBe(200)
      } finally {
        reader.destroy()
      }
    }))

  it("drops a waiting request whose client left, without losing its turn", () =>
    withDesk(1, async (desk) => {
      const first = desk.get("/read/first", "a")
      await until(() => desk.heldCount() === 1)
      const leaving = rawGet(desk.port, "/read/left", "b", false)
      await sleep(100)
      leaving.destroy()
      await sleep(100)
      const after = desk.get("/read/after", "c")
      await sleep(50)
      desk.release()
      await first
      await until(() => desk.heldCount() === 1)
      desk.release()
      expect((await after).status).toBe(200)
      expect(desk.seen).toEqual(["/read/first", "/read/after"])
    }))

  it("sends requests with a body, /mcp streams, the reads exempt from limits and those answered from memory straight in", () =>
    withDesk(1, async (desk) => {
      const held = desk.get("/read/held", "a")
      await until(() => desk.heldCount() === 1)
      // `/api/status` and `/api/template` are limited but read no database: they answer while reads hold every turn.
      const straight = await Promise.all([
        desk.get("/read/posted", "b", { method: "POST", body: "{}" }),
        desk.get("/mcp", "c"),
        desk.get("/api/health", "d"),
        desk.get("/llms.txt", "e"),
        desk.get("/api/status", "f"),
        desk.get("/api/template", "g")
      ])
      expect(straight.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200])
      desk.release()
      expect((await held).status).toBe(200)
    }))

  it("lets in twice the database pool by default; DESK_ACTIVE_REQUESTS sets it, within 1-100000", () => {
    const read = (settings: Record<string, string>) =>
      Effect.runSync(Effect.either(
        Effect.withConfigProvider(activeRequestsConfig, ConfigProvider.fromMap(new Map(Object.entries(settings))))
      ))
    expect(read({})).toEqual(Either.right(20))
    expect(read({ DESK_DB_POOL: "4" })).toEqual(Either.right(8))
    expect(read({ DESK_ACTIVE_REQUESTS: "3" })).toEqual(Either.right(3))
    for (const bad of ["0", "100001", "many"]) expect(Either.isLeft(read({ DESK_ACTIVE_REQUESTS: bad }))).toBe(true)
  })

  it("lets in a long line of reads the app answers at once without going deeper per read", () => {
    // As the edge answers a client over its cap: synchronously, so each answer ends a turn inside the last.
    const exchange = (url: string) => {
      const response = Object.assign(new EventEmitter(), { destroyed: false }) as unknown as ServerResponse
      const request = { method: "GET", url, headers: {}, socket: { destroyed: false } } as unknown as IncomingMessage
      return [request, response] as const
    }
    let answered = 0
    let held: ServerResponse | undefined
    const serve = admitted((request, response) => {
      if (request.url === "/read/held") held = response
      else {
        answered++
        response.emit(ENDED)
      }
    }, { active: 1, clientOf: () => "one" })
    serve(...exchange("/read/held"))
    for (let n = 0; n < 50_000; n++) serve(...exchange(`/read/${n}`))
    expect(answered).toBe(0)
    held!.emit(ENDED)
    expect(answered).toBe(50_000)
  })
})
