import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { holdDataDir } from "../../adapters/storage/DataDirLock.ts"

const root = new URL("../../", import.meta.url).pathname

/** `npm run audit` on an embedded store, with a chain configured that it never reaches before the store. */
const audit = (dir: string, port: number) =>
  Effect.async<{ code: number; output: string }>((resume) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/audit.ts"],
      {
        cwd: root,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          PORT: String(port),
          DESK_DATA_DIR: dir,
          DESK_NETWORK: "base-sepolia",
          DESK_CHAIN_RPC_URL: "http://127.0.0.1:1",
          DESK_FACILITATOR_URL: "http://127.0.0.1:1",
          DESK_PAY_TO: "0x1111111111111111111111111111111111111111"
        }
      },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr }))
    )
  })

describe("npm run audit on an embedded store", () => {
  it.scoped(
    "is refused by the directory's lock while a desk holds it, not by whatever answers on its address",
    () =>
      Effect.gen(function*() {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "handoff-audit-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        // Something answering /api/health on DESK_PUBLIC_URL's port: another desk, on another directory.
        const other = createServer((_, response) => response.end("{\"ok\":true}"))
        yield* Effect.acquireRelease(
          Effect.async<void>((resume) => void other.listen(0, "127.0.0.1", () => resume(Effect.void))),
          () => Effect.sync(() => other.close())
        )
        const port = (other.address() as { port: number }).port

        // Free directory: the audit opens it (and finds no desk in it) whatever answers on the port.
        const free = yield* audit(dir, port)
        expect(free.output).toContain("the database holds no desk")

        // Held by a desk (this process): refused, naming it.
        yield* holdDataDir(dir)
        const held = yield* audit(dir, port)
        expect(held.code).toBe(2)
        expect(held.output).toMatch(
          new RegExp(
            `^handoff-desk audit: DESK_DATA_DIR .* is in use by another desk \\(pid ${process.pid}\\): stop it`
          )
        )
      }),
    240_000
  )
})
