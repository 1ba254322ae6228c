import { describe, expect, it } from "@effect/vitest"
import { withoutEmptyParams } from "../../src/Http/EmptyParams.ts"

describe("empty query parameters", () => {
  it("are left out of the URL; everything else stays as sent", () => {
    expect(withoutEmptyParams("/api/discover")).toBe("/api/discover")
    expect(withoutEmptyParams("/api/discover?q=x&tag=y")).toBe("/api/discover?q=x&tag=y")
    expect(withoutEmptyParams("/api/discover?q=&tag=y")).toBe("/api/discover?tag=y")
    expect(withoutEmptyParams("/api/discover?tag=y&q=")).toBe("/api/discover?tag=y")
    expect(withoutEmptyParams("/api/discover?q&tag=y&&sort=")).toBe("/api/discover?tag=y")
    expect(withoutEmptyParams("/api/discover?q=&sort=")).toBe("/api/discover")
    expect(withoutEmptyParams("/api/discover?")).toBe("/api/discover")
    expect(withoutEmptyParams("/api/discover?q=a%3D&x=%20")).toBe("/api/discover?q=a%3D&x=%20")
    expect(withoutEmptyParams("/api/discover?q=a=")).toBe("/api/discover?q=a=")
  })
})
