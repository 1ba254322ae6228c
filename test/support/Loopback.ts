import { Effect } from "effect"
import { randomInt } from "node:crypto"
import { Agent, type IncomingHttpHeaders, request } from "node:http"
import { connect, createServer } from "node:net"

/**
 * A fresh address in 127.0.0.0/8 to send from: every address there is this host, so a test gets its own
 * rate budget even on a Redis that other suites (or the previous run) share.
 */
export const loopbackAddress = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`

/** Linux routes all of 127.0.0.0/8 to this host; macOS only 127.0.0.1 unless aliases are added. */
export const loopbackRangeUsable = await new Promise<boolean>((resolve) => {
  const server = createServer((socket) => socket.destroy())
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number }
    const socket = connect({ host: "127.0.0.1", port, localAddress: "127.3.2.1" })
    const done = (usable: boolean) => {
      socket.destroy()
      server.close()
      resolve(usable)
    }
    socket.on("connect", () => done(true))
    socket.on("error", () => done(false))
  })
})

export interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
  /** The body parsed as JSON, `undefined` when it is not JSON; tests assert on it field by field. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export interface SendInit {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string | Buffer
  /** Source address of the connection (see loopbackAddress); 127.0.0.1 by default. */
  readonly from?: string
  /** A connection of its own, closed after the response: a request that lies about its length cannot spoil the next. */
  readonly fresh?: boolean
}

/**
 * Node's agent heeds a server's `Keep-Alive: timeout=N` (dropping an idle connection a second before the server
 * does) only when it has a timeout of its own; without one a connection left idle about as long as the desk's
 * keep-alive timeout (5 s) may be reused as the desk closes it, and the request fails with "socket hang up".
 * An active request is not cut by it: the agent destroys only idle connections on a timeout.
 */
const IDLE_TIMEOUT_MS = 60_000

const agents = new Map<string, Agent>()
const agentFor = (from: string) => {
  let agent = agents.get(from)
  if (agent === undefined) {
    agent = new Agent({ keepAlive: true, localAddress: from, maxSockets: 32, timeout: IDLE_TIMEOUT_MS })
    agents.set(from, agent)
  }
  return agent
}

/**
 * One HTTP request over node:http: fetch can neither choose its source address nor send a path such as
 * `/api/handoffs/DESK-1/../2` without resolving it first.
 */
export const send = (url: string, init: SendInit = {}): Effect.Effect<Reply, Error> =>
  Effect.async<Reply, Error>((resume) => {
    const [, hostname, port, path] = /^http:\/\/([^/:]+):(\d+)(\/.*)$/.exec(url) ?? []
    if (path === undefined) return resume(Effect.fail(new Error(`not an http://host:port/path URL: ${url}`)))
    const body = init.body === undefined ? undefined : Buffer.from(init.body)
    const req = request({
      hostname,
      port: Number(port),
      path,
      method: init.method ?? (body === undefined ? "GET" : "POST"),
      ...(init.fresh
        ? { agent: false, localAddress: init.from ?? "127.0.0.1" }
        : { agent: agentFor(init.from ?? "127.0.0.1") }),
      headers: {
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(body.length) }),
        ...init.headers
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", (error) => resume(Effect.fail(error)))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let json: unknown = undefined
        try {
          json = JSON.parse(text)
        } catch {
          // Left undefined: the assertion on json names what was expected.
        }
        resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, text, json }))
      })
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end(body)
    return Effect.sync(() => req.destroy())
  })

/** JSON request helpers for the desk's routes. */
export const postJson = (url: string, json: unknown, init: Omit<SendInit, "body"> = {}) =>
  send(url, { ...init, method: init.method ?? "POST", body: JSON.stringify(json) })
