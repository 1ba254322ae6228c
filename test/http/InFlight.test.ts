import type { Server } from "node:http"
import { connect } from "node:net"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { InFlight } from "../../src/Http/InFlight.ts"
import { makeServer } from "../../src/Http/NodeServer.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A server whose every answer takes `ms`, with the InFlight it counts its answers in. */
const slowServer = async (ms: number) => {
  const inFlight = new InFlight()
  const server: Server = makeServer({ requestSeconds: 5 }, () => {}, undefined, inFlight)
  server.on("request", (_request, response) => {
    setTimeout(() => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    }, ms)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { inFlight, port: (server.address() as AddressInfo).port, server }
}

describe("the answers a server has in flight", () => {
  it("end with their connection: pipelined requests of a client that hung up are not kept", async () => {
    const { inFlight, port, server } = await slowServer(100)
    try {
      const socket = connect({ host: "127.0.0.1", port }, () => {
        socket.write("GET /a HTTP/1.1\r\nHost: desk\r\n\r\n".repeat(3))
      })
      socket.on("error", () => {})
      await sleep(50)
      expect(inFlight.isIdle()).toBe(false)
      socket.destroy()
      // The first answer closes when written; the two queued behind it never get the socket.
      await sleep(300)
      expect(inFlight.isIdle()).toBe(true)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("leave no listener behind on a keep-alive connection", async () => {
    const { inFlight, port, server } = await slowServer(0)
    try {
      let seen = 0
      server.on("connection", (socket) => {
        socket.on("data", () => (seen = Math.max(seen, socket.listenerCount("close"))))
      })
      const socket = connect({ host: "127.0.0.1", port })
      let answers = 0
      socket.on("data", (chunk: Buffer) => (answers += chunk.toString().split("HTTP/1.1 200").length - 1))
      for (let i = 0; i < 30; i++) {
        socket.write("GET /a HTTP/1.1\r\nHost: desk\r\n\r\n")
        await sleep(10)
      }
      // And 20 pipelined at once: still one listener of ours on the connection, not one each.
      socket.write("GET /a HTTP/1.1\r\nHost: desk\r\n\r\n".repeat(20))
      await sleep(200)
      expect(answers).toBe(50)
      expect(inFlight.isIdle()).toBe(true)
      // Node's own listeners and at most one of ours: one per request would pass ten and warn.
      expect(seen).toBeLessThan(10)
      socket.destroy()
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
