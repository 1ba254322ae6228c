import { describe, expect, it } from "@effect/vitest"
import { randomHex } from "../../src/Domain/RandomHex.ts"

describe("randomHex", () => {
  it("hands out each drawn byte once, whole, across many refills of its pool", () => {
    // 12 bytes do not divide the 4 kB pool: draws meet its end short of a whole one. 30,000 draws refill it ~90 times.
    const drawn = Array.from({ length: 30_000 }, () => randomHex(12))
    for (const hex of drawn) expect(hex).toMatch(/^[0-9a-f]{24}$/)
    expect(new Set(drawn).size).toBe(drawn.length)
    // The bytes look uniform: each hex digit about 1/16 of 720,000 (a stuck or reused pool would skew it).
    const counts = new Map<string, number>()
    for (const hex of drawn) for (const digit of hex) counts.set(digit, (counts.get(digit) ?? 0) + 1)
    expect(counts.size).toBe(16)
    for (const count of counts.values()) expect(Math.abs(count - 45_000)).toBeLessThan(2_000)
  })

  it("draws sizes of any length up to its pool, and refuses more", () => {
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/)
    expect(randomHex(4096)).toMatch(/^[0-9a-f]{8192}$/)
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/)
    expect(() => randomHex(4097)).toThrow(RangeError)
  })
})
