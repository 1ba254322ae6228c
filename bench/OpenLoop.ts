import type { Request, RequestStep } from "autocannon"
import { Agent, request as httpRequest } from "node:http"
import { type Measured, summarize } from "./Measure.ts"

interface Reply {
  readonly status: number
  readonly body: string
}

const send = (agent: Agent, base: URL, step: Request): Promise<Reply> =>
  new Promise((resolve) => {
    const req = httpRequest({
      agent,
      hostname: base.hostname,
      port: base.port,
      method: step.method ?? "GET",
      path: step.path ?? "/",
      headers: { accept: "application/json", ...step.headers },
      timeout: 10_000
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      response.on("error", () => resolve({ status: 0, body: "" }))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve({ status: 0, body: "" }))
    req.end(step.body)
  })

/**
 * An open-loop load: arrivals every 1/rate seconds whatever the desk's answers, each running the scenario's
 * steps in turn; a request's latency runs from its arrival's scheduled time (a desk that falls behind is
 * charged for the queue, unlike a closed loop that slows down with it). Connections are opened as needed.
 */
export const offer = async (
  url: string,
  steps: Array<RequestStep>,
  rate: number,
  seconds: number
): Promise<Measured> => {
  const base = new URL(url)
  // An idle connection is closed here before the desk's 5 s keep-alive timeout closes it, as fetch (undici) does
  // from the server's Keep-Alive hint; otherwise a request may go out on a connection the desk is closing at that
  // moment and fail without a status, a race of the client's own (one such failure in a 1,000,000 run, none in
  // its reruns).
  const agent = new Agent({ keepAlive: true, maxSockets: 1024, timeout: 4_000 })
  const latencies: Array<number> = []
  const failures: Record<string, number> = {}
  const started = performance.now()
  const arrivals = Math.floor(rate * seconds)
  const inFlight: Array<Promise<void>> = []
  const arrival = async (scheduled: number) => {
    const context: Record<string, unknown> = {}
    for (const step of steps) {
      const request = step.setupRequest === undefined ? step : step.setupRequest({ ...step }, context)
      const reply = await send(agent, base, request)
      step.onResponse?.(reply.status, reply.body, context)
      latencies.push(performance.now() - scheduled)
      if (reply.status < 200 || reply.status > 299) failures[reply.status] = (failures[reply.status] ?? 0) + 1
      scheduled = performance.now()
    }
  }
  for (let i = 0; i < arrivals; i++) {
    const scheduled = started + (i * 1000) / rate
    const wait = scheduled - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    inFlight.push(arrival(scheduled))
  }
  await Promise.all(inFlight)
  agent.destroy()
  const errors = Object.values(failures).reduce((a, b) => a + b, 0)
  const measured = summarize(latencies, errors, (performance.now() - started) / 1000)
  return {
    ...measured,
    rps: (latencies.length - errors) / seconds,
    ...(errors > 0 ? { failures } : {})
  }
}
