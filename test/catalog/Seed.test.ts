import { describe, expect, it } from "vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { filing, newAgentId } from "../support/Fixtures.ts"

const run = promisify(execFile)

describe("npm run seed", () => {
  it("imports seed listings with origin seed, and refuses a bad file whole", async () => {
    const dir = mkdtempSync(join(tmpdir(), "desk-seed-"))
    try {
      // The embedded store: this test must not write seed rows into a shared PostgreSQL database.
      const env: NodeJS.ProcessEnv = { ...process.env, DESK_DATA_DIR: join(dir, "data") }
      delete env.DATABASE_URL
      const good = join(dir, "good.json")
      writeFileSync(good, JSON.stringify([filing(newAgentId(), { title: "Seed one" }), filing(newAgentId(), { title: "Seed two" })]))
      const { stdout } = await run("node", ["--import", "tsx", "src/seed.ts", good], { env })
      expect(stdout).toMatch(/DESK-\d+\tseed\tSeed one/)
      expect(stdout).toContain("seeded 2 listing(s)")

      const bad = join(dir, "bad.json")
      writeFileSync(bad, JSON.stringify([filing(newAgentId(), { title: "Seed three" }), filing(newAgentId(), { priceUsd: 0 })]))
      const failed = await run("node", ["--import", "tsx", "src/seed.ts", bad], { env }).catch((error: { code: number; stderr: string }) => error)
      expect(failed).toMatchObject({ code: 1 })
      expect((failed as { stderr: string }).stderr).toContain("seed:")

      const again = await run("node", ["--import", "tsx", "src/seed.ts", good], { env })
      expect(again.stdout).toContain("seeded 2 listing(s)")
      expect(again.stdout).not.toContain("Seed three")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
