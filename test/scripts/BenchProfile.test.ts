import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { readProfile, summarizeProfile } from "../../bench/Profile.ts"
import { bundleInto } from "../../scripts/bundle.mjs"

const root = mkdtempSync(join(tmpdir(), "bench-profile-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Busy for about `ms`, in a function of its own: a profile of it is mostly this function. */
const spinner = (name: string, ms: number) =>
  `export function ${name}() {
  const until = performance.now() + ${ms}
  let x = 0
  while (performance.now() < until) for (let i = 0; i < 1000; i++) x += Math.sqrt(i)
  return x
}
`

/**
 * A program laid out as the desk is (its own src/ and a package in node_modules/), bundled by the desk's own
 * bundler into one file two directories down, as the desk's bundle is, and profiled by `node --cpu-prof`.
 */
const profiled = () => {
  mkdirSync(join(root, "src"))
  mkdirSync(join(root, "node_modules", "@scope", "slowpkg"), { recursive: true })
  writeFileSync(join(root, "node_modules", "@scope", "slowpkg", "package.json"), "{\"name\":\"@scope/slowpkg\"}")
  writeFileSync(join(root, "node_modules", "@scope", "slowpkg", "index.js"), spinner("packaged", 150))
  writeFileSync(join(root, "src", "Hot.ts"), spinner("hot", 450))
  writeFileSync(
    join(root, "src", "main.ts"),
    "import { packaged } from \"@scope/slowpkg\"\nimport { hot } from \"./Hot.ts\"\nconsole.log(hot() + packaged())\n"
  )
  const bundle = join(root, ".build", "program", "main.mjs")
  return { bundle }
}

describe("the bench's profile summary", () => {
  it("reads a profile of the bundle as the files and packages it was built from", async () => {
    const { bundle } = profiled()
    await bundleInto(bundle, { main: join(root, "src", "main.ts") })
    const profiles = join(root, "profiles")
    execFileSync(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${profiles}`, bundle])
    const [file] = readdirSync(profiles)
    const summary = summarizeProfile(readProfile(join(profiles, file!)), root)

    expect(summary.busySamples).toBeGreaterThan(100)
    const share = (list: ReadonlyArray<{ where: string; share: number }>, where: string) =>
      list.find((_) => _.where === where)?.share ?? 0
    // 450 ms in src/Hot.ts against 150 in the package: each named by where it was written, not by the bundle.
    expect(share(summary.bySource, "src/Hot.ts")).toBeGreaterThan(0.4)
    expect(share(summary.bySource, "@scope/slowpkg")).toBeGreaterThan(0.1)
    expect(share(summary.bySource, "src/Hot.ts")).toBeGreaterThan(share(summary.bySource, "@scope/slowpkg"))
    // Only the few lines the bundler wrote itself (its module wrapper) have no source to be traced back to.
    expect(share(summary.bySource, ".build/program/main.mjs")).toBeLessThan(0.05)
    // A function is named with the line it begins on.
    expect(summary.byFunction[0]!.where).toBe("hot src/Hot.ts:1")
    expect(summary.byFunction.map((_) => _.where)).toContain("packaged @scope/slowpkg/index.js:1")
    // Shares of the busy samples: idle time is left out, and no place holds more than all of it.
    expect(summary.bySource.reduce((sum, _) => sum + _.share, 0)).toBeLessThanOrEqual(1.000001)
  })
})
