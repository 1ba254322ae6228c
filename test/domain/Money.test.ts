import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { UsdAmount, usdText } from "../../src/Domain/Money.ts"

describe("USD text for URLs", () => {
  it("is a plain decimal the query parser takes back to the same micro-USDC", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [0, "0"],
      [1, "0.000001"],
      [10, "0.00001"],
      [500_000, "0.5"],
      [3_000_000, "3"],
      [9_950_000, "9.95"],
      [1_000_000_000_000_000, "1000000000"]
    ]
    for (const [micros, text] of cases) {
      expect(usdText(micros), text).toBe(text)
      expect(Schema.decodeSync(UsdAmount)(Number(text)), text).toBe(micros)
    }
  })
})
