import { describe, expect, it } from "@effect/vitest"
import { type AddressInfo, connect } from "node:net"
import { makeServer } from "../../src/Http/NodeServer.ts"

describe("the Node server", () => {
  it("answers requests that arrive before the desk's handler is attached, once it is", async () => {
    const server = makeServer({ requestSeconds: 5 })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      const early = [1, 2, 3].map((n) =>
        fetch(`http://127.0.0.1:${port}/early/${n}`, { signal: AbortSignal.timeout(3000) }).then((response) =>
          response.text()
        )
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      server.on("request", (request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ url: request.url }))
      })
      expect((await Promise.all(early)).map((text) => JSON.parse(text).url).sort()).toEqual([
        "/early/1",
        "/early/2",
        "/early/3"
      ])
      // Later requests go straight to the handler.
      const late = await fetch(`http://127.0.0.1:${port}/late`).then((response) => response.json())
      expect(late).toEqual({ url: "/late" })
      expect(server.listenerCount("request")).toBe(1)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("closes the socket of a client that does not read its response within the request timeout", async () => {
    const server = makeServer({ requestSeconds: 1 })
    // 64 MiB: far more than the kernel buffers on both sides take, so most of it waits in the desk's memory.
    const big = Buffer.alloc(64 * 1024 * 1024, 120)
    let endedAt = 0
    server.on("request", (request, response) => {
      if (request.url === "/slow") {
        // A slow answer is not a slow reader: the clock starts when the response is finished.
        setTimeout(() => response.end("{}"), 1_500)
        return
      }
      response.writeHead(200, { "content-type": "application/octet-stream" })
      response.end(big)
      endedAt = Date.now()
    })
    // Seen from the desk's side: a paused client socket does not notice the close until it reads again.
    const closed = new Promise<number>((resolve) =>
      server.once("connection", (socket) => socket.once("close", () => resolve(Date.now() - endedAt)))
    )
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    const client = connect({ host: "127.0.0.1", port }, () => {
      client.write("GET /big HTTP/1.1\r\nHost: desk\r\n\r\n")
      client.pause()
    })
    client.on("error", () => {})
    try {
      const closedAfter = await closed
      expect(closedAfter).toBeGreaterThanOrEqual(900)
      expect(closedAfter).toBeLessThan(10_000)

      const slow = await fetch(`http://127.0.0.1:${port}/slow`).then((response) => response.json())
      expect(slow).toEqual({})
    } finally {
      client.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }, 30_000)
})
