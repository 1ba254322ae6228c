import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { postJson, send } from "../support/Loopback.ts"
import { startDesk, startExpectingExit, tempDataDir } from "../support/Process.ts"

describe("one desk per embedded data directory", () => {
  it.scopedLive(
    "a second desk refuses the directory, naming it and the holder's pid; a SIGKILLed holder's lock is taken over",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDataDir
        const first = yield* startDesk({ env: { DESK_DATA_DIR: dir } })
        const filer = newAgentId()
        const filed = yield* postJson(`${first.url}/api/handoffs`, filing(filer), { headers: { "x-agent-id": filer } })
        expect(filed.status).toBe(201)

        // A real second process on the same directory: one line, exit 1, and the first desk is untouched.
        const second = yield* Effect.promise(() => startExpectingExit({ DESK_DATA_DIR: dir }))
        expect(second.code).toBe(1)
        const lines = second.stderr.trim().split("\n")
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(`DESK_DATA_DIR ${dir} is in use by another desk (pid ${first.pid})`)
        expect((yield* send(`${first.url}/api/handoffs/${filed.json.id}`)).status).toBe(200)

        // Killed without a chance to clean up: its lock stays behind, naming a process that no longer exists.
        yield* first.stop("SIGKILL")
        expect(JSON.parse(readFileSync(join(dir, "desk.lock"), "utf8")).pid).toBe(first.pid)
        const third = yield* startDesk({ env: { DESK_DATA_DIR: dir } })
        const seen = yield* send(`${third.url}/api/handoffs/${filed.json.id}`)
        expect(seen.json).toMatchObject({ id: filed.json.id, filerDid: filer })
        expect(JSON.parse(readFileSync(join(dir, "desk.lock"), "utf8")).pid).toBe(third.pid)

        // A clean stop gives the directory back.
        expect(yield* third.stop("SIGTERM")).toEqual({ code: 0, signal: null })
        expect(existsSync(join(dir, "desk.lock"))).toBe(false)
      }),
    300_000
  )
})
