import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { startDesk, tempDataDir } from "../support/Process.ts"

// The desk as it runs (src/main.ts), with one turn: every read (previews and bodies by id going straight in) of a crowd on kept-alive connections is let in and
// answered, its turn ending with its answer, and health answers beside them. A turn that never ended, or a read
// handed to the API twice or not at all, fails it. (A turn ending before a slow client has read its answer is
// test/http/Admission.test.ts's.)
describe("a desk letting one read in at a time", () => {
  it.scopedLive(
    "answers a crowd of reads on kept-alive connections, and health while they wait",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDataDir
        const desk = yield* startDesk({ env: { DESK_DATA_DIR: dir, DESK_ACTIVE_REQUESTS: "1" } })
        const read = (path: string) =>
          Effect.promise(() =>
            fetch(`${desk.url}${path}`, { signal: AbortSignal.timeout(20_000) }).then((response) => response.status)
          )
        const reads = Effect.all(
          Array.from(
            { length: 40 },
            (_, n) =>
              read(
                n % 2 === 0
                  ? `/api/discover?q=cache&page=${1 + (n % 3)}`
                  : n % 4 === 1
                  ? "/api/status"
                  : `/api/handoffs/DESK-1${n % 8 === 3 ? "/body" : ""}`
              )
          ),
          { concurrency: "unbounded" }
        )
        const [statuses, health] = yield* Effect.all([reads, read("/api/health")], { concurrency: "unbounded" })
        // Previews and bodies by id take no turn; a body read without a receipt is offered for sale (402).
        const expected = Array.from({ length: 40 }, (_, n) => n % 8 === 3 ? 402 : 200)
        expect(statuses).toEqual(expected)
        expect(health).toBe(200)
        // And again on the same (kept-alive) connections.
        expect(yield* reads).toEqual(expected)
      }),
    { timeout: 120_000 }
  )
})
