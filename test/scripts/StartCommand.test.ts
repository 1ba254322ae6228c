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

  it("gives a PostgreSQL desk a larger young generation and room for it, and the embedded desk neither", () => {
    // The embedded desk's memory is bounded (docs/operating.md). V8 keeps the old generation able to take in a
    // whole young generation, so 2 x 64 MB of young generation under a 192 MB cap left 64 MB for everything else
    // and V8 marked the old generation without pause: the later cap must be the one node keeps.
    const postgres = startCommand({ DATABASE_URL: "postgres://x/y" }).args
    expect(postgres).toContain("--max-semi-space-size=64")
    const caps = postgres.filter((arg) => arg.startsWith("--max-old-space-size="))
    expect(caps.at(-1)).toBe("--max-old-space-size=512")
    const embedded = startCommand({}).args
    expect(embedded.some((arg) => arg.startsWith("--max-semi-space-size"))).toBe(false)
    expect(embedded.filter((arg) => arg.startsWith("--max-old-space-size="))).toEqual(["--max-old-space-size=192"])
  })

  it("leaves the heap limit node runs with to the last cap given", () => {
    const limitMb = (args: ReadonlyArray<string>) =>
      Number(execFileSync(process.execPath, [...args, "-p", "require('v8').getHeapStatistics().heap_size_limit"], {
        encoding: "utf8"
      })) / 2 ** 20
    const flags = (env: Record<string, string>) => startCommand(env).args.filter((arg) => arg.startsWith("--max-"))
    expect(limitMb(flags({ DATABASE_URL: "postgres://x/y" }))).toBeGreaterThanOrEqual(512)
    expect(limitMb(flags({}))).toBeLessThan(300)
  })

  it("refuses a start script it would read otherwise than sh", () => {
    expect(() => startCommand({}, "node $HOME/x scripts/start.mjs")).toThrow(/only \$\{NAME:\+word\}/)
  })
})
