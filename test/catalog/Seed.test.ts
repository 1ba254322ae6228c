import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
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
      writeFileSync(
        good,
        JSON.stringify([filing(newAgentId(), { title: "Seed one" }), filing(newAgentId(), { title: "Seed two" })])
      )
      const { stdout } = await run("node", ["--import", "tsx", "src/main.ts", "seed", good], { env })
      expect(stdout).toMatch(/DESK-\d+\tseed\tSeed one/)
      expect(stdout).toContain("seeded 2 listing(s)")

      const refused = (file: string) =>
        run("node", ["--import", "tsx", "src/main.ts", "seed", file], { env }).then(
          () => expect.fail(`${file} was seeded`),
          (error: { code: number; stderr: string }) => {
            expect(error.code).toBe(1)
            // One line naming the listing and the rule, not an Effect cause tree.
            expect(error.stderr.trim().split("\n")).toHaveLength(1)
            return error.stderr.trim()
          }
        )

      const bad = join(dir, "bad.json")
      writeFileSync(
        bad,
        JSON.stringify([filing(newAgentId(), { title: "Seed three" }), filing(newAgentId(), { priceUsd: 0 })])
      )
      expect(await refused(bad)).toBe(
        `seed: ${bad} is not a JSON array of filing requests: listing 2: priceUsd: must be between 0.000001 and ` +
          "1000000000 US dollars; got 0"
      )
      expect(await refused(join(dir, "missing.json"))).toMatch(/^seed: cannot read .*missing\.json: ENOENT/)

      // The same listings again are copies of listed bodies: refused whole, naming the first.
      expect(await refused(good)).toMatch(/^seed: listing 1 \("Seed one"\): .* already listed as DESK-\d+/)

      // One body twice in a file: named as such, not as "already listed" under an id the refusal rolled back.
      const twice = join(dir, "twice.json")
      const body = filing(newAgentId()).body
      writeFileSync(
        twice,
        JSON.stringify([
          filing(newAgentId(), { title: "Seed five", body }),
          filing(newAgentId(), { title: "Seed six", body })
        ])
      )
      expect(await refused(twice)).toBe(
        "seed: listing 2 (\"Seed six\"): its body is listing 1's (\"Seed five\") again; nothing was imported"
      )

      const fresh = join(dir, "fresh.json")
      writeFileSync(fresh, JSON.stringify([filing(newAgentId(), { title: "Seed four" })]))
      const again = await run("node", ["--import", "tsx", "src/main.ts", "seed", fresh], { env })
      expect(again.stdout).toContain("seeded 1 listing(s)")
      expect(again.stdout).not.toContain("Seed three")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
