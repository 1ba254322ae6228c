import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schedule } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { loopbackAddress, loopbackRangeUsable, send } from "../support/Loopback.ts"
import { type DeskProcess, startDesk, startExpectingExit } from "../support/Process.ts"
import { REDIS_URL, redisUp } from "../support/Redis.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

class Cluster extends Context.Tag("test/Workers/Cluster")<Cluster, DeskProcess>() {}

/** Two workers on a fresh database, both listening (health answers once the first listens). */
const twoWorkers = Effect.gen(function*() {
  const databaseUrl = yield* freshDatabaseUrl(DATABASE_URL!)
  const desk = yield* startDesk({ env: { DATABASE_URL: databaseUrl, REDIS_URL, DESK_WORKERS: "2" } })
  yield* Effect.sync(() => desk.logs().filter((_) => String(_.message).startsWith("Listening on")).length).pipe(
    Effect.repeat({ until: (n) => n >= 2, schedule: Schedule.spaced("100 millis") }),
    Effect.timeout("60 seconds"),
    Effect.orDie
  )
  return desk
})

const ClusterLive = Layer.scoped(Cluster, twoWorkers)

const workersOf = (pid: number) =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((_) => _ !== "").map(Number)

/** CPU time (user + system) in clock ticks. */
const cpuTicks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return Number(fields[11]) + Number(fields[12])
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

// Needs DATABASE_URL, a Redis on 127.0.0.1:6379 and the whole 127.0.0.0/8 range (Linux); else skipped.
describe.skipIf(DATABASE_URL === undefined || !redisUp || !loopbackRangeUsable)("DESK_WORKERS=2", () => {
  layer(ClusterLive, { excludeTestServices: true, timeout: "180 seconds" })("on PostgreSQL and Redis", (it) => {
    it.effect("two worker processes answer on one port, both taking requests", () =>
      Effect.gen(function*() {
        const desk = yield* Cluster
        const workers = workersOf(desk.pid)
        expect(workers).toHaveLength(2)
        const before = workers.map(cpuTicks)
        // A connection per request: the primary hands connections to the workers in turn.
        const replies = yield* Effect.forEach(
          range(600),
          (i) => send(`${desk.url}/api/status`, { from: loopbackAddress(), fresh: true }).pipe(Effect.as(i)),
          { concurrency: 4 }
        )
        expect(replies).toHaveLength(600)
        // Each worker served about 300 requests (over 15 ticks of CPU); an idle one uses a tick or two meanwhile.
        const used = workers.map((pid, i) => cpuTicks(pid) - before[i]!)
        for (const ticks of used) expect(ticks).toBeGreaterThanOrEqual(5)
      }))

    it.effect("share one rate budget: the 181st request from one client is a 429 whichever worker takes it", () =>
      Effect.gen(function*() {
        const desk = yield* Cluster
        const from = loopbackAddress()
        const passed = yield* Effect.forEach(range(180), () => send(`${desk.url}/api/status`, { from, fresh: true }), {
          concurrency: 4
        })
        expect(passed.map((_) => _.status)).toEqual(range(180).map(() => 200))
        for (const _ of range(4)) {
          const refused = yield* send(`${desk.url}/api/status`, { from, fresh: true })
          expect(refused.status).toBe(429)
          expect(refused.json).toMatchObject({ ok: false, error: "rate_limited" })
        }
      }))
  })
})

describe.skipIf(DATABASE_URL === undefined || !redisUp)("DESK_WORKERS=2 when a worker dies", () => {
  it.scopedLive(
    "the others stop and the desk says it stopped, not that it cannot start",
    () =>
      Effect.gen(function*() {
        const desk = yield* twoWorkers
        process.kill(workersOf(desk.pid)[0]!, "SIGKILL")
        // The primary stops the other worker, then exits on its own.
        yield* Effect.sync(() => existsSync(`/proc/${desk.pid}`)).pipe(
          Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("100 millis") }),
          Effect.timeout("30 seconds"),
          Effect.orDie
        )
        expect((yield* desk.stop()).code).toBe(1)
        const said = desk.output().split("\n").filter((line) => line.startsWith("handoff-desk:"))
        expect(said).toEqual([
          expect.stringMatching(/^handoff-desk: stopped: desk worker \d+ exited \(SIGKILL\); stopped the others$/)
        ])
      }),
    120_000
  )
})

// Skipped without DATABASE_URL: workers need PostgreSQL.
describe.skipIf(DATABASE_URL === undefined)("DESK_WORKERS=2 with Redis unreachable", () => {
  it.scopedLive(
    "each worker still holds a client to the limit, in its own memory: at most twice it passes",
    () =>
      Effect.gen(function*() {
        const databaseUrl = yield* freshDatabaseUrl(DATABASE_URL!)
        const desk = yield* startDesk({
          env: { DATABASE_URL: databaseUrl, REDIS_URL: "redis://127.0.0.1:1", DESK_WORKERS: "2", DESK_RATE_LIMIT: "3" }
        })
        const from = loopbackAddress()
        const answers = yield* Effect.forEach(range(12), () => send(`${desk.url}/api/status`, { from, fresh: true }))
        // Before, a limiter that could not reach Redis let every request through: 12 of 12.
        expect(answers.filter((_) => _.status === 200).length).toBeLessThanOrEqual(6)
        expect(answers.filter((_) => _.status === 429).length).toBeGreaterThanOrEqual(6)
        for (const refused of answers.filter((_) => _.status === 429)) {
          expect(refused.json).toMatchObject({ ok: false, error: "rate_limited" })
        }
      }),
    120_000
  )
})

describe("DESK_WORKERS refused at startup", () => {
  it("without PostgreSQL (the embedded store is one process's), in one line", async () => {
    const result = await startExpectingExit({ DESK_WORKERS: "2", REDIS_URL })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split("\n")).toEqual([
      "handoff-desk: cannot start: DESK_WORKERS=2 needs PostgreSQL (DATABASE_URL): the embedded store serves one " +
      "process; unset DESK_WORKERS or set DATABASE_URL"
    ])
  })

  it("without Redis (each worker would keep its own rate budget), in one line", async () => {
    const result = await startExpectingExit({ DESK_WORKERS: "3", DATABASE_URL: "postgres://desk@127.0.0.1:1/none" })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split("\n")).toEqual([
      "handoff-desk: cannot start: DESK_WORKERS=3 needs REDIS_URL so the workers share one rate limit per client; " +
      "set REDIS_URL or unset DESK_WORKERS"
    ])
  })

  it("a count out of range", async () => {
    const result = await startExpectingExit({ DESK_WORKERS: "0" })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("DESK_WORKERS must be between 1 and 64")
  })

  // Each worker printed its own line and the primary a third, which called a start that never served a stop.
  it("a start every worker fails says why once, as a start that failed", async () => {
    const taken = createServer()
    await new Promise<void>((listening) => taken.listen(0, "127.0.0.1", listening))
    try {
      const port = String((taken.address() as { port: number }).port)
      const workers = { DESK_WORKERS: "2", REDIS_URL: "redis://127.0.0.1:1" }
      const [refused, inUse] = await Promise.all([
        startExpectingExit({ ...workers, DATABASE_URL: "postgres://desk@127.0.0.1:1/none" }),
        startExpectingExit({ ...workers, DATABASE_URL: "postgres://desk@127.0.0.1:1/none", PORT: port })
      ])
      expect(refused.code).toBe(1)
      expect(refused.stderr.trim().split("\n")).toEqual([
        "handoff-desk: cannot start: DATABASE_URL: nothing accepts connections at 127.0.0.1:1 (connection refused); " +
        "start PostgreSQL there or fix the host and port"
      ])
      expect(inUse.code).toBe(1)
      expect(inUse.stderr.trim().split("\n")).toEqual([
        `handoff-desk: cannot start: PORT ${port} on 127.0.0.1 is already in use (EADDRINUSE); stop what listens ` +
        "there or set another PORT"
      ])
    } finally {
      await new Promise((closed) => taken.close(closed))
    }
  }, 120_000)
})
