import { FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { ITEMS_APART, jsonParts, PART_CHARS } from "../../src/Http/JsonParts.ts"

/** Members JSON.stringify writes, leaves out (undefined, functions) or writes as null inside a list. */
const member = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue() },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant(() => 1) },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }) }
)
const longList = fc.array(member, { minLength: ITEMS_APART + 1, maxLength: 300 })
// Not "__proto__": assigning it sets the object's prototype, not a member.
const key = fc.string().filter((name) => name !== "__proto__")

describe("a JSON text in parts", () => {
  it("joins to exactly JSON.stringify's text, each part short", () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, member),
        fc.array(fc.tuple(key, longList), { minLength: 1, maxLength: 3 }),
        (rest, lists) => {
          const value: Record<string, unknown> = { ...rest }
          for (const [key, list] of lists) value[key] = list
          const parts = jsonParts(value)
          expect(parts).toBeDefined()
          expect(parts!.join("")).toBe(JSON.stringify(value))
          const longestItem = Math.max(
            0,
            ...lists.flatMap(([, list]) => list.map((item) => JSON.stringify(item)?.length ?? 4))
          )
          for (const part of parts!) expect(part.length).toBeLessThan(PART_CHARS + longestItem + 64)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("leaves a long page of previews in parts under 64 kB", () => {
    const item = { id: "DESK-1", teaser: "y".repeat(1_700) }
    const parts = jsonParts({ total: 100, items: Array.from({ length: 100 }, () => item) })!
    expect(parts.length).toBeGreaterThan(4)
    for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThan(64 * 1024)
  })

  it("leaves whole what holds no long list, or is not a plain object", () => {
    const short = Array.from({ length: ITEMS_APART }, (_, i) => i)
    for (
      const value of [
        { items: short },
        [Array.from({ length: 100 }, (_, i) => i)],
        "text",
        null,
        new Date(0),
        { items: Array.from({ length: 100 }, (_, i) => i), toJSON: () => "mine" },
        new (class Page {
          items = Array.from({ length: 100 }, (_, i) => i)
        })()
      ]
    ) expect(jsonParts(value)).toBeUndefined()
  })
})
