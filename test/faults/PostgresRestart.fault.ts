import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, Schedule } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { bookViolations } from "../support/Books.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { type Acks, lostAcks, startLoad } from "../support/Load.ts"
import { postJson, type Reply, send } from "../support/Loopback.ts"
import { startDesk } from "../support/Process.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/** The local cluster (version and name) that serves DATABASE_URL's port, as `pg_lsclusters` lists it. */
const cluster = ((): readonly [string, string] | undefined => {
  if (DATABASE_URL === undefined) return undefined
  const port = new URL(DATABASE_URL).port || "5432"
  try {
    execFileSync("sh", ["-c", "command -v pg_ctlcluster"], { stdio: "ignore" })
    const listed = execFileSync("pg_lsclusters", ["--no-header"], { encoding: "utf8" })
    const [version, name] = listed.split("\n").map((line) => line.trim().split(/\s+/)).find((row) => row[2] === port) ??
      []
    return version === undefined || name === undefined ? undefined : [version, name]
  } catch {
    return undefined
  }
})()

/** Stops or starts that cluster; `stop` is a fast shutdown, which ends every session at once. */
const pgCtl = (action: "stop" | "start") =>
  Effect.async<void, Error>((resume) => {
    execFile("pg_ctlcluster", ["--skip-systemctl-redirect", ...cluster!, action], (error) =>
      resume(error === null ? Effect.void : Effect.fail(error)))
  })

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

const healthUntil = (url: string, status: number) =>
  send(`${url}/api/health`, { fresh: true }).pipe(
    Effect.filterOrFail((reply: Reply) => reply.status === status, () => new Error(`not ${status} yet`)),
    Effect.retry(Schedule.spaced("100 millis")),
    Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error(`/api/health never answered ${status}`) })
  )

// Restarts the PostgreSQL of DATABASE_URL, so it runs alone (`npm run test:faults`), never beside other suites.
// Skipped without DATABASE_URL, or where no pg_ctlcluster manages the cluster behind it.
describe.skipIf(cluster === undefined)("PostgreSQL restarted under load", () => {
  it.scopedLive(
    "clean 503s with Retry-After while it is down, then the pool reconnects; nothing lost, nothing half-written",
    () =>
      Effect.gen(function*() {
        const url = yield* freshDatabaseUrl(DATABASE_URL!)
        // Runs before the database is dropped, and whatever happened to the test.
        yield* Effect.addFinalizer(() => Effect.ignore(pgCtl("start")))
        const desk = yield* startDesk({ env: { DATABASE_URL: url, DESK_RATE_LIMIT: "1000000" } })
        const run = `outage ${randomBytes(4).toString("hex")}`
        const filers = range(3).map(() => newAgentId())
        const buyers = range(8).map(() => newAgentId())
        const acks: Acks = { filings: [], unlocks: [] }
        for (const i of range(3)) {
          const title = `${run} listing ${i}`
          const filed = yield* postJson(
            `${desk.url}/api/handoffs`,
            filing(filers[i]!, { title, priceUsd: 0.01, reconstructUsd: 1 }),
            {
              headers: { "x-agent-id": filers[i]! }
            }
          )
          expect(filed.status).toBe(201)
          acks.filings.push({ id: filed.json.id, title })
        }

        const load = yield* startLoad({
          url: desk.url,
          clients: 6,
          run,
          filers,
          buyers,
          handoffs: acks.filings.map((_) => _.id),
          stopOnFailure: false
        })
        yield* Effect.sleep("1 second")
        yield* pgCtl("stop")
        const down = yield* healthUntil(desk.url, 503)
        expect(down.json).toMatchObject({ ok: false, error: "unavailable" })
        expect(down.headers["retry-after"]).toBe("5")
        yield* Effect.sleep("2 seconds")
        yield* pgCtl("start")
        yield* healthUntil(desk.url, 200)
        const upAt = Date.now()
        yield* Effect.sleep("1 second")
        yield* load.stop
        acks.filings.push(...load.acks.filings)
        acks.unlocks.push(...load.acks.unlocks)

        // Every request had an answer, in time, and none was a 500.
        const answers = load.answers
        expect(answers.filter((_) => ![200, 201, 503].includes(_.status))).toEqual([])
        expect(answers.filter((_) => _.ms > 10_000)).toEqual([])
        const refused = answers.filter((_) => _.status === 503)
        expect(refused.length).toBeGreaterThan(0)
        expect(refused.filter((_) => _.error !== "unavailable" || _.retryAfter !== "5")).toEqual([])
        expect(answers.filter((_) => _.at > upAt && _.status < 300).length).toBeGreaterThan(0)

        expect(yield* lostAcks(desk.url, acks)).toEqual([])
        const sql = Postgres.layer(Redacted.make(url))
        expect(yield* bookViolations.pipe(Effect.provide(sql), Effect.orDie)).toEqual({})
      }),
    180_000
  )
})
