import { connect } from "node:net"

export const REDIS_URL = "redis://127.0.0.1:6379"

/** Whether a Redis answers PING on 127.0.0.1:6379 (CI starts one when it is installed; laptops may not). */
export const redisUp = await new Promise<boolean>((resolve) => {
  const socket = connect({ host: "127.0.0.1", port: 6379 })
  const done = (up: boolean) => {
    socket.destroy()
    resolve(up)
  }
  socket.setTimeout(500, () => done(false))
  socket.on("error", () => done(false))
  socket.on("connect", () => socket.write("PING\r\n"))
  socket.on("data", (data) => done(data.toString().startsWith("+PONG")))
})
