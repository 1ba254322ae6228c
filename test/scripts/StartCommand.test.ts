import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { startCommand } from "../../scripts/bundle.mjs"

const script: string = JSON.parse(readFileSync("package.json", "utf8")).scripts.start

/** The words sh runs for the start script in `env` (npm runs scripts through sh): node and its arguments. */
const asShRunsIt = (env: Record<string, string>) =>
  execFileSync("sh", ["-c", script.replace(/(^|\s)node(\s)/, "$1printf '%s\\n' node$2")], {
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8"
  }).trim().split("\n")

describe("the start command, as the bench and the tests run the desk", () => {
  it.each([
    ["PostgreSQL", { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" }],
    ["the embedded store", {}],
    ["an empty DATABASE_URL", { DATABASE_URL: "" }]
  ])("has the arguments sh gives node on %s", (_, env: Record<string, string>) => {
    expect(["node", ...startCommand(env).args]).toEqual(asShRunsIt(env))
  })

  it("gives a PostgreSQL desk a larger young generation under the same heap cap, and the embedded desk neither", () => {
    // Sized by two measurements (docs/operating.md): 2 x 64 MB took the desk past 250 MB under the slow readers of
    // test/process/SlowReaders.test.ts, and under the 192 MB cap left the old generation so little room that V8
    // marked it without pause (V8 keeps room in the old generation for a whole young generation).
    const postgres = startCommand({ DATABASE_URL: "postgres://x/y" }).args
    expect(postgres).toContain("--max-semi-space-size=32")
    expect(postgres.filter((arg) => arg.startsWith("--max-old-space-size="))).toEqual(["--max-old-space-size=192"])
    const embedded = startCommand({}).args
    expect(embedded.some((arg) => arg.startsWith("--max-semi-space-size"))).toBe(false)
    expect(embedded.filter((arg) => arg.startsWith("--max-old-space-size="))).toEqual(["--max-old-space-size=192"])
  })

  it("refuses a start script it would read otherwise than sh", () => {
    expect(() => startCommand({}, "node $HOME/x scripts/start.mjs")).toThrow(/only \$\{NAME:\+word\}/)
  })
})
