import { Either, FastCheck as fc, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { HandoffRow, HandoffRowDecoded, ListedRowWithTotal } from "../../src/Catalog/HandoffRow.ts"
import { DbInt } from "../../src/Domain/DbTypes.ts"

/** The schema the hand-written decoders stand for, with a listing's count and (where cut) the rows its page read. */
const Listed = Schema.Struct({ ...HandoffRow.fields, total: DbInt, page_rows: Schema.optional(DbInt) })

const INTS = ["seq", "price_micro", "reconstruct_micro", "body_chars", "purchases", "useful", "not_useful"]

/** A row as a driver hands it over: int8 columns as strings (node-postgres) or numbers (PGlite), dates either way. */
const driverRow = fc.record({
  seq: fc.integer({ min: 1 }),
  title: fc.string(),
  teaser: fc.string(),
  filer: fc.string(),
  filer_did: fc.string(),
  price_micro: fc.integer({ min: 0 }),
  reconstruct_micro: fc.maxSafeInteger(),
  minutes: fc.option(fc.double(), { nil: null }),
  tags: fc.array(fc.string()),
  contains: fc.array(fc.string()),
  does_not_contain: fc.array(fc.string()),
  why_pay: fc.string(),
  // Not "__proto__": Schema.Record assigns it (setting the copy's prototype), the decoder keeps it as the own key
  // JSON.parse made; provenance is read field by field, so neither reaches a preview.
  provenance: fc.option(fc.dictionary(fc.string().filter((key) => key !== "__proto__"), fc.jsonValue()), {
    nil: null
  }),
  origin: fc.constantFrom("filed", "seed"),
  is_demo: fc.boolean(),
  hash: fc.string(),
  body_chars: fc.nat(),
  purchases: fc.nat(),
  useful: fc.nat(),
  not_useful: fc.nat(),
  filed_at: fc.date({ noInvalidDate: true }),
  total: fc.nat(),
  page_rows: fc.option(fc.nat(), { nil: undefined }),
  // A column no preview reads: both leave it out.
  search: fc.string()
}).chain((row) =>
  fc.record({
    asStrings: fc.subarray([...INTS, "total", "page_rows"]),
    dateAsString: fc.boolean()
  }).map(({ asStrings, dateAsString }) => {
    const out: Record<string, unknown> = { ...row }
    for (const name of asStrings) out[name] = String(out[name])
    if (dateAsString) out.filed_at = row.filed_at.toISOString()
    return out
  })
)

/** Values a column may wrongly hold: each is wrong for some columns, and some (a numeric string) right for others. */
const oddValue = fc.constantFrom<unknown>(
  null,
  undefined,
  1.5,
  -0,
  Number.NaN,
  2 ** 60,
  "",
  " ",
  " 12 ",
  "1e3",
  "0x10",
  "NaN",
  "Infinity",
  "12abc",
  "2026-11-27T00:00:00Z",
  "not a date",
  new Date("not a date"),
  [],
  ["a", 1],
  {},
  { a: 1 },
  true,
  "seed",
  "other"
)

const withOddColumn = fc.tuple(driverRow, fc.constantFrom(...Object.keys(Listed.fields)), oddValue)
  .map(([row, column, value]) => ({ ...row, [column]: value }))

/** A decoded value in a form `toEqual` tells apart: a Date by its time (an invalid one's is NaN). */
const plain = (value: unknown): unknown =>
  value instanceof Date
    ? { date: String(value.getTime()) }
    : Array.isArray(value)
    ? value.map(plain)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plain(member)]))
    : value

const outcome = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.match(Schema.decodeUnknownEither(schema)(input), { onLeft: () => "refused", onRight: plain })

/**
 * A flat row as the listing statements read it: its preview's columns as the object `preview` (previewJson), its
 * count and its page's rows beside it. What is not an object stays as it is.
 */
const asRead = (input: unknown): unknown => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input
  const { page_rows, total, ...preview } = input as Record<string, unknown>
  return { preview, total, page_rows }
}

const agree = (input: unknown) => {
  expect(outcome(HandoffRowDecoded, asRead(input))).toEqual(outcome(HandoffRow, input))
  expect(outcome(ListedRowWithTotal, asRead(input))).toEqual(outcome(Listed, input))
}

describe("the hand-written decoding of handoff rows", () => {
  it("decodes what the schema decodes, as it does", () => {
    fc.assert(
      fc.property(driverRow, (row) => {
        expect(outcome(HandoffRowDecoded, asRead(row))).not.toBe("refused")
        agree(row)
      }),
      { numRuns: 500 }
    )
  })

  it("refuses what the schema refuses, a column at a time", () => {
    fc.assert(fc.property(withOddColumn, agree), { numRuns: 2_000 })
  })

  it("refuses what is not a row at all", () => {
    for (const input of [null, undefined, "row", 1, [], [{}]]) agree(input)
    const [row] = fc.sample(driverRow, { numRuns: 1, seed: 3 })
    for (const preview of [undefined, null, "row", [row]]) {
      expect(outcome(ListedRowWithTotal, { preview, total: 1, page_rows: 1 })).toBe("refused")
    }
    // The flat columns, as the statements read them before the preview came as one object, are not a row.
    expect(outcome(ListedRowWithTotal, row)).toBe("refused")
  })

  it("reads a preview as PostgreSQL's JSON gives it: int8 as numbers, the date with its offset", () => {
    const [row] = fc.sample(driverRow, { numRuns: 1, seed: 11 })
    const { page_rows: __, total: _, ...columns } = row as Record<string, unknown>
    const json = JSON.parse(JSON.stringify({ ...columns, seq: 42, filed_at: "2026-11-27T20:08:07.262458-05:00" }))
    const decoded = Schema.decodeUnknownSync(ListedRowWithTotal)({ preview: json, total: 3, page_rows: 21 })
    expect(decoded.seq).toBe(42)
    expect(decoded.total).toBe(3)
    expect(decoded.page_rows).toBe(21)
    expect(decoded.filed_at.toISOString()).toBe("2026-11-28T01:08:07.262Z")
  })

  it("keeps dates as dates and int8 strings as numbers", () => {
    const [row] = fc.sample(driverRow, { numRuns: 1, seed: 7 })
    const decoded = Schema.decodeUnknownSync(ListedRowWithTotal)(asRead({
      ...row,
      seq: "9007199254740991",
      total: "40",
      filed_at: "2026-11-27T00:00:00.000Z"
    }))
    expect(decoded.seq).toBe(Number.MAX_SAFE_INTEGER)
    expect(decoded.total).toBe(40)
    expect(decoded.filed_at).toEqual(new Date("2026-11-27T00:00:00.000Z"))
    expect(Either.isLeft(Schema.decodeUnknownEither(HandoffRowDecoded)(asRead({ ...row, seq: "9007199254740993" }))))
      .toBe(true)
  })
})
