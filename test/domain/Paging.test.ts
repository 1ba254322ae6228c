import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { DiscoverArguments, DiscoverParams, toCatalogQuery } from "../../src/Domain/Discover.ts"
import { pagesOf, RESULT_WINDOW } from "../../src/Domain/Paging.ts"
import { ReceiptsArguments, ReceiptsParams } from "../../src/Domain/ReceiptQuery.ts"

describe("the result window", () => {
  it("is one rule for URL parameters and MCP arguments, of the catalog and of receipts", () => {
    const decoders = [
      (page: number, limit: number) =>
        Schema.decodeUnknownEither(DiscoverParams)({ page: String(page), limit: String(limit) }),
      (page: number, limit: number) => Schema.decodeUnknownEither(DiscoverArguments)({ page, limit }),
      (page: number, limit: number) =>
        Schema.decodeUnknownEither(ReceiptsParams)({ page: String(page), limit: String(limit) }),
      (page: number, limit: number) => Schema.decodeUnknownEither(ReceiptsArguments)({ page, limit })
    ]
    for (const decode of decoders) {
      expect(Either.isRight(decode(100, 100))).toBe(true)
      expect(Either.isRight(decode(10_000, 1))).toBe(true)
      expect(Either.isLeft(decode(101, 100))).toBe(true)
      expect(Either.isLeft(decode(101, 1000))).toBe(true)
      expect(Either.isRight(decode(100, 1000))).toBe(true)
      expect(Either.isLeft(decode(1e9, 100))).toBe(true)
    }
    expect(toCatalogQuery(Schema.decodeUnknownSync(DiscoverParams)({ page: "500" }))).toMatchObject({
      page: 500,
      limit: 20
    })
    expect(Either.isLeft(Schema.decodeUnknownEither(DiscoverParams)({ page: "501" }))).toBe(true)
  })

  it("counts only the pages a reader can reach", () => {
    expect(pagesOf(45, 20)).toBe(3)
    expect(pagesOf(0, 20)).toBe(0)
    expect(pagesOf(1_000_000, 20)).toBe(RESULT_WINDOW / 20)
    expect(pagesOf(1_000_000, 30)).toBe(333)
  })
})

describe("query text", () => {
  const discover = (params: Record<string, string>) => Schema.decodeUnknownEither(DiscoverParams)(params)
  const since = (text: string) => Either.map(discover({ since: text }), (_) => _.since?.toISOString())

  it("reads numbers only as decimals", () => {
    for (const text of ["0x10", "0b11", "0o7", "1e2", " 16", "16 ", "Infinity", "", "1_000", "+-1"]) {
      expect(Either.isLeft(discover({ page: text })), text).toBe(true)
      expect(Either.isLeft(Schema.decodeUnknownEither(ReceiptsParams)({ limit: text })), text).toBe(true)
    }
    expect(Either.getOrThrow(discover({ page: "16", maxPrice: "0.5" }))).toMatchObject({ page: 16, maxPrice: 500_000 })
    expect(Either.getOrThrow(discover({ maxPrice: ".5" }))).toMatchObject({ maxPrice: 500_000 })
    expect(Either.getOrThrow(discover({ maxPrice: "2." }))).toMatchObject({ maxPrice: 2_000_000 })
  })

  it("reads `since` only as an ISO 8601 date or date-time, in UTC unless it names an offset", () => {
    for (
      const text of [
        "1",
        "2026",
        "2026-1-1",
        "2026-02-30",
        "2026-02-29",
        "2026-01-01T24:00:00Z",
        "Jan 1 2026",
        "2026-01-01T00:00:00+02",
        "2026-01-01T00:00:00 02:00",
        "10000-01-01",
        "0000-12-31"
      ]
    ) {
      expect(Either.isLeft(since(text)), text).toBe(true)
    }
    expect(since("2024-02-29")).toEqual(Either.right("2024-02-29T00:00:00.000Z"))
    expect(since("2026-01-31T10:20")).toEqual(Either.right("2026-01-31T10:20:00.000Z"))
    expect(since("2026-01-31t10:20:30.5z")).toEqual(Either.right("2026-01-31T10:20:30.500Z"))
    expect(since("2026-01-31T10:20:30+02:00")).toEqual(Either.right("2026-01-31T08:20:30.000Z"))
    expect(since("0001-01-01")).toEqual(Either.right("0001-01-01T00:00:00.000Z"))
  })
})

describe("a tag query", () => {
  it("refuses a tag of invisible characters only, which would otherwise filter nothing", () => {
    for (const tag of ["\u3164", "\u115f\u1160", "\u200b x"]) {
      const decoded = Schema.decodeUnknownEither(DiscoverParams)({ tag })
      if (tag === "\u200b x") expect(toCatalogQuery(Either.getOrThrow(decoded)).tag).toBe("x")
      else expect(Either.isLeft(decoded), JSON.stringify(tag)).toBe(true)
    }
    expect(Either.isLeft(Schema.decodeUnknownEither(DiscoverArguments)({ tag: "\u3164" }))).toBe(true)
  })
})
