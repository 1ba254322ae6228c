import { describe, expect, it } from "vitest"
import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { migrations } from "../../src/Migrations/index.ts"

describe("migrations", () => {
  it("registers every numbered file in src/Migrations, in order, and nothing else", () => {
    const dir = fileURLToPath(new URL("../../src/Migrations", import.meta.url))
    const files = readdirSync(dir).filter((_) => /^\d+_.+\.ts$/.test(_)).map((_) => _.replace(/\.ts$/, "")).sort()
    expect(Object.keys(migrations)).toEqual(files)
    files.forEach((file, index) => expect(Number(file.split("_")[0])).toBe(index + 1))
  })
})
