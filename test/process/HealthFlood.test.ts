import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { deskBehindDelayProxy } from "../support/DelayProxy.ts"
import { send } from "../support/Loopback.ts"
import { DATABASE_URL } from "../support/Storage.ts"

// /api/health is exempt from the rate limit (monitors call it freely), so a flood of it must not become a flood of
// statements. Needs DATABASE_URL (a real server behind a slow link); skipped without it.
describe.skipIf(DATABASE_URL === undefined)("a flood of health checks", () => {
  it.scopedLive(
    "shares its database probes: 80 checks at once over a 400 ms link all answer 200 within the health timeout",
    () =>
      Effect.gen(function*() {
        // A pool of 4: one probe per check would need 20 round trips of 400 ms in turn, far past the 2 s timeout.
        const { desk, proxy } = yield* deskBehindDelayProxy({ DESK_DB_POOL: "4" })
        expect((yield* send(`${desk.url}/api/health`, { fresh: true })).status).toBe(200)

        proxy.setDelay(400)
        const started = Date.now()
        const replies = yield* Effect.forEach(
          Array.from({ length: 80 }),
          () => send(`${desk.url}/api/health`, { fresh: true }),
          { concurrency: "unbounded" }
        )
        expect(replies.map((_) => _.status)).toEqual(replies.map(() => 200))
        // The first probe and one more for everyone who asked while it was out: two round trips, not twenty.
        expect(Date.now() - started).toBeLessThan(1_900)
      }),
    60_000
  )
})
