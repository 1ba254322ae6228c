import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { send } from "./Loopback.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the tests' HTTP helper", () => {
  it("drops a kept-alive connection before the server's announced keep-alive timeout, not as the server does", async () => {
    const server = createServer((request, response) => {
      const delay = Number(new URL(request.url ?? "/", "http://x").searchParams.get("delay") ?? 0)
      setTimeout(() => response.end("{}"), delay)
    })
    // Announced as `Keep-Alive: timeout=2`: the helper's connections must go idle-closed after about a second.
    server.keepAliveTimeout = 2_000
    let connections = 0
    server.on("connection", () => connections++)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      const url = (delay: number) => `http://127.0.0.1:${port}/?delay=${delay}`
      expect((await Effect.runPromise(send(url(0)))).status).toBe(200)
      // Reused at once: the connection is kept.
      expect((await Effect.runPromise(send(url(0)))).status).toBe(200)
      expect(connections).toBe(1)
      // Idle for 1.5 s of the server's 2: too close to reuse (Node's own agent, without a timeout, would).
      await sleep(1_500)
      expect((await Effect.runPromise(send(url(0)))).status).toBe(200)
      expect(connections).toBe(2)
      // A request slower than the idle timeout is not cut by it.
      expect((await Effect.runPromise(send(url(1_500)))).status).toBe(200)
      expect(connections).toBe(2)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
