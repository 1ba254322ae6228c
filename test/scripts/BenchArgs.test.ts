import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const run = (script: string, ...args: Array<string>) =>
  spawnSync(process.execPath, ["--import", "tsx", script, ...args], { cwd: root, encoding: "utf8", timeout: 60_000 })

// `npm run bench -- --help` printed node:util's ERR_PARSE_ARGS_UNKNOWN_OPTION stack trace.
describe("the bench scripts' command lines", () => {
  it("--help prints every option with its default and exits 0", () => {
    const help = run("bench/run.ts", "--help")
    expect(help.status).toBe(0)
    for (const option of ["--handoffs <value>", "--scenarios <value>", "--rate <value>", "--reload", "--help"]) {
      expect(help.stdout).toContain(option)
    }
    expect(help.stdout).toMatch(/--handoffs <value>\s+catalog size: 10000, 100000 or 1000000 \(default: 10000\)/)
    const compare = run("bench/compare.ts", "--help")
    expect(compare.status).toBe(0)
    expect(compare.stdout).toMatch(/--base <value>\s+.*\(default: HEAD\)/)
  }, 120_000)

  it("an unknown option or a missing value is one line and the usage on stderr, exit 2, no stack trace", () => {
    for (const args of [["--bogus"], ["--handoffs"], ["stray"]]) {
      const refused = run("bench/run.ts", ...args)
      expect({ args, status: refused.status }).toEqual({ args, status: 2 })
      expect(refused.stderr.split("\n")[0]).toMatch(/^npm run bench --: /)
      expect(refused.stderr).toContain("Usage: npm run bench -- [options]")
      expect(refused.stderr).not.toMatch(/\n\s+at /)
    }
  }, 120_000)
})
