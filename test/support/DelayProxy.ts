import { Effect } from "effect"
import { connect, createServer, type Socket } from "node:net"
import { startDesk } from "./Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "./Storage.ts"

/**
 * A TCP proxy on 127.0.0.1 that hands every byte the server sends back to its client `delayMs` late (in order),
 * and passes the client's bytes on at once: a desk connected through it hears its database late, as one on a
 * slow link or a busy machine does. `setDelay` changes the delay for the bytes that arrive after it; raised to
 * longer than the test, the server seems to stop answering (lowered, later bytes could pass earlier ones). Closed,
 * with every connection through it, when the scope closes.
 */
export const delayProxy = (target: { readonly host: string; readonly port: number }, initialDelayMs: number) =>
  Effect.acquireRelease(
    Effect.async<{
      readonly port: number
      readonly setDelay: (delayMs: number) => void
      readonly close: () => Promise<void>
    }>((resume) => {
      let delayMs = initialDelayMs
      const sockets = new Set<Socket>()
      const server = createServer((client) => {
        const upstream = connect(target.port, target.host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("close", () => {
            sockets.delete(socket)
            client.destroy()
            upstream.destroy()
          })
          socket.on("error", () => socket.destroy())
        }
        client.pipe(upstream)
        upstream.on("data", (chunk) => setTimeout(() => client.write(chunk), delayMs))
        upstream.on("end", () => setTimeout(() => client.end(), delayMs))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          port: (server.address() as { port: number }).port,
          setDelay: (next) => {
            delayMs = next
          },
          close: () =>
            new Promise<void>((done) => {
              for (const socket of sockets) socket.destroy()
              server.close(() => done())
            })
        })))
    }),
    (proxy) => Effect.promise(proxy.close)
  )

/**
 * A desk (`startDesk`, with `env`) on a fresh database of DATABASE_URL's server, which it reaches through a delay
 * proxy, at no delay until the test sets one. Needs DATABASE_URL.
 */
export const deskBehindDelayProxy = (env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const url = new URL(yield* freshDatabaseUrl(DATABASE_URL!))
    const proxy = yield* delayProxy({ host: url.hostname, port: Number(url.port || "5432") }, 0)
    url.hostname = "127.0.0.1"
    url.port = String(proxy.port)
    const desk = yield* startDesk({ env: { ...env, DATABASE_URL: url.toString() } })
    return { desk, proxy }
  })
