import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { artifactPath, compileTestUsdc, serializeArtifact } from "../../scripts/compile-token.ts"

describe("adapters/chain/TestUsdc.json", () => {
  it("matches a fresh compile of contracts/TestUsdc.sol (run `npx tsx scripts/compile-token.ts` if not)", () => {
    const committed = readFileSync(artifactPath, "utf8")
    const fresh = serializeArtifact(compileTestUsdc())

    expect(JSON.parse(committed).bytecode).toBe(JSON.parse(fresh).bytecode)
    expect(committed).toBe(fresh)
  }, 30_000)
})
