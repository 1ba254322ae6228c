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
