import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** Starts the desk from the sources with only `env` (plus PATH and HOME); resolves with its exit code and stderr. */
const startWith = (env: Record<string, string>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const dataDir = mkdtempSync(join(tmpdir(), "handoff-desk-"))
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", HOST: "127.0.0.1", DESK_DATA_DIR: dataDir, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      rmSync(dataDir, { recursive: true, force: true })
      resolve({ code, stderr })
    })
  })

const expectOneLine = (result: { code: number | null; stderr: string }, reason: RegExp) => {
  expect(result.code).toBe(1)
  const lines = result.stderr.trim().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^handoff-desk: cannot start: \S/)
  expect(lines[0]).toMatch(reason)
}

describe("a desk that cannot start says why in one line and exits 1", () => {
  it("bad configuration", async () => {
    expectOneLine(await startWith({ PORT: "abc" }), /PORT/)
    expectOneLine(await startWith({ PORT: "0", DESK_PUBLIC_URL: "notaurl" }), /DESK_PUBLIC_URL/)
  }, 120_000)

  it("a port already in use", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const port = (taken.address() as { port: number }).port
      expectOneLine(await startWith({ PORT: String(port) }), /EADDRINUSE/)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  }, 120_000)
})
