import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { availableParallelism } from "node:os"
import { afterEach, describe, expect, it } from "vitest"
import { median } from "../../bench/Measure.ts"
import type { Server } from "../../bench/Processes.ts"
import { scalingLine } from "../../bench/Report.ts"
import { measureScaling } from "../../bench/Scaling.ts"

const open: Array<HttpServer> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})

/** A server that answers after `delayMs` and notes in `turns` when the load moved to it from the other. */
const serve = async (name: string, delayMs: number, turns: Array<string>): Promise<Server> => {
  const server = createServer((_, response) => {
    if (turns.at(-1) !== name) turns.push(name)
    setTimeout(() => response.end("ok"), delayMs)
  })
  open.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pid: process.pid,
    startupMs: 0,
    takePeakRss: () => 0,
    cpuMs: () => 0,
    mainThread: () => undefined,
    stop: async () => {}
  }
}

describe("the bench's comparison of one desk process with several", () => {
  it("measures both in every round, swapping which goes first, and reports the median round's ratio", async () => {
    const turns: Array<string> = []
    const one = await serve("one", 40, turns)
    const many = await serve("many", 10, turns)
    const scaling = await measureScaling({
      one,
      many,
      workers: 2,
      route: "/",
      requests: [{ method: "GET", path: "/" }],
      rounds: 3,
      connections: 4,
      warmup: 1,
      seconds: 1
    })
    expect(scaling.rounds).toHaveLength(3)
    // One, many | many, one | one, many: in the same order every round, the load would move five times.
    expect(turns).toEqual(["one", "many", "one", "many"])
    expect(scaling.speedup).toBeCloseTo(median(scaling.rounds.map((round) => round.many.rps / round.one.rps)), 6)
    // A quarter of the latency per connection: several times the throughput, even on a loaded machine.
    expect(scaling.speedup).toBeGreaterThan(1.5)
    expect(scalingLine(2, scaling)).toContain(`${scaling.speedup.toFixed(2)}x one process, the median round`)
    // What the load generator (this process, servers included here) spent a request, within the wall time it ran.
    for (const side of scaling.rounds.flatMap((round) => [round.one, round.many])) {
      expect(side.loadCpuMsPerRequest).toBeGreaterThan(0)
      expect(side.loadCpuMsPerRequest! * side.rps * side.seconds).toBeLessThanOrEqual(
        side.seconds * 1000 * availableParallelism()
      )
      if (process.platform === "linux") {
        expect(side.machineIdle).toBeGreaterThanOrEqual(0)
        expect(side.machineIdle).toBeLessThanOrEqual(1)
      }
    }
    const line = scalingLine(2, scaling)
    const first = scaling.rounds[0]!
    expect(line).toContain(`load generator CPU: one process ${first.one.loadCpuMsPerRequest!.toFixed(3)}`)
    if (process.platform === "linux") expect(line).toMatch(/machine idle: one process \d+ %, \d+ %, \d+ %, 2 workers/)
  }, 30_000)

  it("says why it made no comparison", () => {
    expect(scalingLine(2, undefined)).toContain("needs PostgreSQL and Redis")
    expect(scalingLine(1, undefined)).toContain("--scaling 2")
  })
})
