import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { migrations } from "../../src/Migrations/index.ts"

describe("migrations", () => {
  it("registers every numbered file in src/Migrations, in order, and nothing else", () => {
    const dir = fileURLToPath(new URL("../../src/Migrations", import.meta.url))
    const files = readdirSync(dir).filter((_) => /^\d+_.+\.ts$/.test(_)).map((_) => _.replace(/\.ts$/, "")).sort()
    expect(Object.keys(migrations)).toEqual(files)
    // Numbers only grow; branches built side by side take reserved numbers (0006 money, 0007 abuse, 0008 people).
    const numbers = files.map((file) => Number(file.split("_")[0]))
    numbers.forEach((number, index) => expect(number).toBeGreaterThan(index === 0 ? 0 : numbers[index - 1]!))
  })
})
