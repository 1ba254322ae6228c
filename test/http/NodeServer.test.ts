import { describe, expect, it } from "@effect/vitest"
import type { Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { ENDED } from "../../src/Http/Admission.ts"
import { JsonParts } from "../../src/Http/JsonParts.ts"
import { makeServer } from "../../src/Http/NodeServer.ts"

/**
 * How long after `endedAt` the server closed the socket of a client that asked for /big and never read its answer.
 * Seen from the desk's side: a paused client socket does not notice the close until it reads again.
 */
const cutOffAfter = async (server: Server, port: number, endedAt: () => number) => {
  const closed = new Promise<number>((resolve) =>
    server.once("connection", (socket) => socket.once("close", () => resolve(Date.now() - endedAt())))
  )
  const client = connect({ host: "127.0.0.1", port }, () => {
    client.write("GET /big HTTP/1.1\r\nHost: desk\r\n\r\n")
    client.pause()
  })
  client.on("error", () => {})
  try {
    return await closed
  } finally {
    client.destroy()
  }
}

/** What the server wrote to one raw request, until it closed the connection (at most 3 s). */
const rawAnswer = (port: number, request: string) =>
  new Promise<string>((resolve) => {
    let text = ""
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(request))
    const timer = setTimeout(() => socket.destroy(), 3_000)
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (text += chunk))
    socket.on("error", () => {})
    socket.on("close", () => {
      clearTimeout(timer)
      resolve(text)
    })
  })

describe("the Node server", () => {
  it("answers in JSON what Node would refuse on its own: no Host, an unknown Expect, CONNECT, `*` but for OPTIONS", async () => {
    const server = makeServer({ requestSeconds: 5 })
    let served = 0
    server.on("request", (_request, response) => {
      served++
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    try {
      const answers = await Promise.all([
        rawAnswer(port, "GET /api/status HTTP/1.1\r\nAccept: application/json\r\n\r\n"),
        rawAnswer(port, "GET /api/status HTTP/1.1\r\nHost: desk\r\nExpect: foo\r\nConnection: close\r\n\r\n"),
        rawAnswer(port, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
        // The target `*` is OPTIONS' alone: the router took `GET *` for `GET /`.
        rawAnswer(port, "GET * HTTP/1.1\r\nHost: desk\r\nConnection: close\r\nX-Request-Id: mine-1\r\n\r\n"),
        // What Node cannot parse at all: a header name with a space.
        rawAnswer(port, "GET /api/status HTTP/1.1\r\nHost: desk\r\nBad Header: x\r\n\r\n")
      ])
      const expected = [
        ["400", "bad_request"],
        ["417", "expectation_failed"],
        ["405", "method_not_allowed"],
        ["400", "bad_request"],
        ["400", "bad_request"]
      ]
      for (const [i, text] of answers.entries()) {
        const [status, code] = expected[i]!
        expect(text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
        const head = text.slice(0, text.indexOf("\r\n\r\n")).toLowerCase()
        expect(head).toContain("content-type: application/json")
        // Every answer carries a request id, the caller's own when it sent a well-formed one.
        expect(head).toMatch(i === 3 ? /\r\nx-request-id: mine-1\r\n/ : /\r\nx-request-id: [0-9a-f-]{36}\r\n/)
        expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toMatchObject({ ok: false, error: code })
      }
      // None of them reached the app; an HTTP/1.0 request needs no Host, and 100-continue is still honoured.
      expect(served).toBe(0)
      const old = await rawAnswer(port, "GET /api/status HTTP/1.0\r\n\r\n")
      expect(old).toMatch(/^HTTP\/1\.1 200 /)
      const continued = await rawAnswer(
        port,
        "POST /x HTTP/1.1\r\nHost: desk\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
      )
      expect(continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /)
      const options = await rawAnswer(port, "OPTIONS * HTTP/1.1\r\nHost: desk\r\nConnection: close\r\n\r\n")
      expect(options).toMatch(/^HTTP\/1\.1 200 /)
      expect(served).toBe(3)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

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
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    try {
      const closedAfter = await cutOffAfter(server, port, () => endedAt)
      expect(closedAfter).toBeGreaterThanOrEqual(900)
      expect(closedAfter).toBeLessThan(10_000)

      const slow = await fetch(`http://127.0.0.1:${port}/slow`).then((response) => response.json())
      expect(slow).toEqual({})
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }, 30_000)

  it("writes a body in parts whole and at once, and cuts off a client that does not read it", async () => {
    const server = makeServer({ requestSeconds: 1 })
    // 64 MiB in parts of 32 kB: more than the kernel buffers take, so a client that never reads holds the rest.
    const part = "x".repeat(32 * 1024)
    const parts = new JsonParts(
      Array.from({ length: 2048 }, (_, i) => (i === 0 ? `"${part.slice(1)}` : i === 2047 ? `${part.slice(1)}"` : part))
    )
    const small = new JsonParts(["{\"items\":[", "1,2,", "3]}"])
    let endedAt = 0
    let endedInEnd = false
    server.on("request", (request, response) => {
      const body = request.url === "/small" ? small : parts
      response.writeHead(200, { "content-type": "application/json" })
      response.once(ENDED, () => (endedInEnd = true))
      response.end(body)
      // The app's turn ends with `end`, however much of the body the client has taken (src/Http/Admission.ts).
      expect(endedInEnd).toBe(true)
      endedAt = Date.now()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    const read = await fetch(`http://127.0.0.1:${port}/small`).then((response) => response.text())
    expect(read).toBe("{\"items\":[1,2,3]}")
    try {
      const closedAfter = await cutOffAfter(server, port, () => endedAt)
      expect(closedAfter).toBeGreaterThanOrEqual(900)
      expect(closedAfter).toBeLessThan(10_000)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }, 30_000)
  it("serves a pipelined request once the answers before it are out of its memory, not while they wait", async () => {
    const server = makeServer({ requestSeconds: 5 })
    const served: Array<string> = []
    server.on("request", (request, response) => {
      served.push(request.url ?? "")
      // Answered later, as the desk's app does, and too large for the kernel to take from a client that never reads.
      setImmediate(() => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(request.url === "/big" ? `"${"x".repeat(64 * 1024 * 1024)}"` : "{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    const client = connect({ host: "127.0.0.1", port }, () => {
      client.write("GET /big HTTP/1.1\r\nHost: desk\r\n\r\nGET /next HTTP/1.1\r\nHost: desk\r\n\r\n")
      client.pause()
    })
    client.on("error", () => {})
    try {
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(served).toEqual(["/big"])
      // Read, and the second is served in its turn.
      client.resume()
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(served).toEqual(["/big", "/next"])
    } finally {
      client.destroy()
      server.close()
    }
  })
})
