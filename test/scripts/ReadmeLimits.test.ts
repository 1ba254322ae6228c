import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { readFileSync } from "node:fs"
import { DEEP_FROM } from "../../src/Catalog/DeepPages.ts"
import { TAG_LISTING_MAX } from "../../src/Catalog/TagsInUse.ts"
import { RESULT_WINDOW } from "../../src/Domain/Paging.ts"
import { timeoutsConfig } from "../../src/Http/NodeServer.ts"
import { policyConfig } from "../../src/RateLimiter.ts"
import { SILENT_GRACE_MS, statementTimeoutConfig } from "../../src/Storage.ts"

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
/** The README's limits list: one line a limit, from its bold name to the next one. */
const limit = (name: string) => {
  const at = readme.indexOf(`- **${name}:**`)
  expect(at, `README names the ${name} limit`).toBeGreaterThanOrEqual(0)
  const next = readme.indexOf("\n- **", at + 1)
  return readme.slice(at, next < 0 ? undefined : next).replace(/\s+/g, " ")
}
const en = (n: number) => n.toLocaleString("en")

// Issue 12: the README states the limits (result window, per-statement time, tag listing, MCP batches, slow
// readers), with the figures the desk runs by when nothing is configured.
describe("the README's limits", () => {
  it.effect("name every limit of issue 12 with the desk's own defaults", () =>
    Effect.gen(function*() {
      const defaults = ConfigProvider.fromMap(new Map())
      const [rate, statementMs, timeouts] = yield* Effect.withConfigProvider(
        Effect.all([policyConfig, statementTimeoutConfig, timeoutsConfig]),
        defaults
      )
      expect(limit("Rate")).toContain(`${rate.limit} requests a minute`)
      expect(rate.windowSeconds).toBe(60)
      expect(limit("Result window")).toContain(`result ${en(RESULT_WINDOW)}`)
      expect(limit("Result window")).toContain(`past result ${en(DEEP_FROM)} one at a time`)
      expect(limit("Per-statement time")).toContain(`at most ${statementMs / 1000} s (\`DESK_STATEMENT_TIMEOUT_MS\`)`)
      expect(limit("Per-statement time")).toContain(`given up ${SILENT_GRACE_MS / 1000} s later`)
      expect(limit("Tag listing")).toContain(`the ${TAG_LISTING_MAX} most used tags`)
      expect(limit("MCP batches")).toContain("refused (400, error -32600)")
      expect(limit("Slow readers")).toContain(`\`DESK_REQUEST_TIMEOUT_SECONDS\` (${timeouts.requestSeconds})`)
    }))
})
