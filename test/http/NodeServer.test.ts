import { describe, expect, it } from "@effect/vitest"
import type { AddressInfo } from "node:net"
import { makeServer } from "../../src/Http/NodeServer.ts"

describe("the Node server", () => {
  it("answers requests that arrive before the desk's handler is attached, once it is", async () => {
    const server = makeServer({ requestSeconds: 5 })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      const early = [1, 2, 3].map((n) =>
        fetch(`http://127.0.0.1:${port}/early/${n}`, { signal: AbortSignal.timeout(3000) }).then((response) => response.text())
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      server.on("request", (request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ url: request.url }))
      })
      expect((await Promise.all(early)).map((text) => JSON.parse(text).url).sort()).toEqual(["/early/1", "/early/2", "/early/3"])
      // Later requests go straight to the handler.
      const late = await fetch(`http://127.0.0.1:${port}/late`).then((response) => response.json())
      expect(late).toEqual({ url: "/late" })
      expect(server.listenerCount("request")).toBe(1)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
