import { Effect } from "effect"
import { connect, createServer, type Socket } from "node:net"

/**
 * One connection through the proxy; once `cut`, nothing more crosses it. Once its `replyLost`, the server still
 * gets what the client sends, but nothing comes back, and a moment later the client's side is closed: the server
 * did the work and the client never hears of it.
 */
export interface Link {
  cut: boolean
  replyLost?: boolean
}

/** How long after its reply is lost a link's client side is closed. */
const REPLY_LOST_CLOSE_MS = 300

export interface CuttableProxy {
  readonly port: number
}

/**
 * A TCP proxy to `target` on a loopback port of its own, closed with the scope. `watch` sees every chunk a client
 * sends before it is forwarded and may cut that chunk's link: a cut link drops the chunk and every later byte, both
 * ways, and neither side's close reaches the other (a partition: not even a FIN crosses). Or it may lose the link's
 * reply: the chunk is forwarded, the answer is not (see Link). Other links pass as usual.
 */
export const cuttableProxy = (target: { host: string; port: number }, watch: (chunk: Buffer, link: Link) => void) =>
  Effect.acquireRelease(
    Effect.async<CuttableProxy & { readonly close: () => Promise<void> }>((resume) => {
      const sockets = new Set<Socket>()
      const server = createServer((client) => {
        const upstream = connect(target.port, target.host)
        const link: Link = { cut: false }
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("error", () => socket.destroy())
        }
        client.on("close", () => {
          if (!link.cut) upstream.destroy()
        })
        upstream.on("close", () => {
          if (!link.cut) client.destroy()
        })
        client.on("data", (chunk: Buffer) => {
          const lost = link.replyLost === true
          if (!link.cut) watch(chunk, link)
          if (!link.cut) upstream.write(chunk)
          if (!lost && link.replyLost === true) setTimeout(() => client.destroy(), REPLY_LOST_CLOSE_MS)
        })
        upstream.on("data", (chunk: Buffer) => {
          if (!link.cut && link.replyLost !== true) client.write(chunk)
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          port: (server.address() as { port: number }).port,
          close: () =>
            new Promise<void>((done) => {
              for (const socket of sockets) socket.destroy()
              server.close(() => done())
            })
        })))
    }),
    (proxy) => Effect.promise(proxy.close)
  )
