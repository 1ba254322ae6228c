import { ParseResult, Predicate, Schema } from "effect"
import { DbDate, DbInt } from "../Domain/DbTypes.ts"
import { Origin } from "../Domain/Preview.ts"

/** The columns a preview is built from; the body is deliberately not among them. */
export const HandoffRow = Schema.Struct({
  seq: DbInt,
  title: Schema.String,
  teaser: Schema.String,
  filer: Schema.String,
  filer_did: Schema.String,
  price_micro: DbInt,
  reconstruct_micro: DbInt,
  minutes: Schema.NullOr(Schema.Number),
  tags: Schema.Array(Schema.String),
  contains: Schema.Array(Schema.String),
  does_not_contain: Schema.Array(Schema.String),
  why_pay: Schema.String,
  provenance: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  origin: Origin,
  is_demo: Schema.Boolean,
  hash: Schema.String,
  body_chars: DbInt,
  purchases: DbInt,
  useful: DbInt,
  not_useful: DbInt,
  filed_at: DbDate
})
export type HandoffRow = typeof HandoffRow.Type

const PREVIEW_COLUMNS = Object.keys(HandoffRow.fields)

/**
 * The preview columns of a handoff as one JSON object named `preview`, `alias` naming the handoff (`h`) or empty.
 * node-postgres then hands a row over with one JSON.parse instead of a text parser per column (postgres-array's
 * loop for each of the three arrays, postgres-date's for the date): 10.6 against 21.6 µs of the desk's CPU a row,
 * raw pg reading 10 previews by seq 2,000 times (bench, 2026-11-28). JSON gives int8 as numbers and the date as an
 * ISO string with its offset, which the decoding below takes as node-postgres' and PGlite's own forms.
 */
export const previewJson = (alias = ""): string => {
  const handoff = alias === "" ? "handoffs" : alias
  return `json_build_object(${
    PREVIEW_COLUMNS.map((column) => `'${column}', ${valueOf(handoff, column)}`).join(", ")
  }) AS preview`
}

/**
 * A preview column's value for the handoff named `handoff`. The sale count is kept apart from the handoff's row
 * (migration 0027), one lookup by key; a handoff being inserted has no count yet, and none sold.
 */
const valueOf = (handoff: string, column: string) =>
  column === "purchases"
    ? `coalesce((SELECT s.sales FROM handoff_sales s WHERE s.handoff_seq = ${handoff}.seq), 0)`
    : `${handoff}.${column}`

/** DbInt's decoding: an integer, or a string that reads as one (int8 and numeric arrive from node-postgres so). */
const int = (value: unknown): number | undefined => {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value
  return typeof n === "number" && Number.isSafeInteger(n) ? n : undefined
}
const { isRecord, isString } = Predicate
const strings = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every(isString) ? value : undefined
const date = (value: unknown): Date | undefined =>
  value instanceof Date ? value : typeof value === "string" ? new Date(value) : undefined

/** `beside[name]` onto `decoded` as DbInt reads it; false when it is not one. */
const putInt = (decoded: Record<string, unknown>, beside: Record<string, unknown>, name: string) => {
  const value = int(beside[name])
  if (value !== undefined) decoded[name] = value
  return value !== undefined
}

/**
 * The first column of `row` (the preview's columns) or of `beside` (the `extra` columns, more DbInt ones, and the
 * `optional` ones where present) that `HandoffRow` with them would refuse, or the row decoded.
 */
const decodeRow = (
  row: Record<string, unknown>,
  beside: Record<string, unknown>,
  extra: ReadonlyArray<string>,
  optional: ReadonlyArray<string>
): HandoffRow | string => {
  const ints = {
    seq: int(row.seq),
    price_micro: int(row.price_micro),
    reconstruct_micro: int(row.reconstruct_micro),
    body_chars: int(row.body_chars),
    purchases: int(row.purchases),
    useful: int(row.useful),
    not_useful: int(row.not_useful)
  }
  for (const name in ints) if (ints[name as keyof typeof ints] === undefined) return name
  const { minutes, origin, provenance } = row
  const [tags, contains, doesNotContain] = [strings(row.tags), strings(row.contains), strings(row.does_not_contain)]
  const filedAt = date(row.filed_at)
  const texts = ["title", "teaser", "filer", "filer_did", "why_pay", "hash"] as const
  const text = texts.find((name) => !isString(row[name]))
  if (text !== undefined) return text
  if (minutes !== null && typeof minutes !== "number") return "minutes"
  if (tags === undefined) return "tags"
  if (contains === undefined) return "contains"
  if (doesNotContain === undefined) return "does_not_contain"
  // As Schema.Record reads it: any object but an array, its own keys copied (jsonb arrives as a plain object).
  if (provenance !== null && !isRecord(provenance)) return "provenance"
  if (origin !== "filed" && origin !== "seed") return "origin"
  if (typeof row.is_demo !== "boolean") return "is_demo"
  if (filedAt === undefined) return "filed_at"
  const decoded: HandoffRow & Record<string, unknown> = {
    seq: ints.seq!,
    title: row.title as string,
    teaser: row.teaser as string,
    filer: row.filer as string,
    filer_did: row.filer_did as string,
    price_micro: ints.price_micro!,
    reconstruct_micro: ints.reconstruct_micro!,
    minutes,
    tags,
    contains,
    does_not_contain: doesNotContain,
    why_pay: row.why_pay as string,
    provenance: provenance === null ? null : { ...provenance },
    origin,
    is_demo: row.is_demo,
    hash: row.hash as string,
    body_chars: ints.body_chars!,
    purchases: ints.purchases!,
    useful: ints.useful!,
    not_useful: ints.not_useful!,
    filed_at: filedAt
  }
  for (const name of extra) if (!putInt(decoded, beside, name)) return name
  for (const name of optional) if (beside[name] !== undefined && !putInt(decoded, beside, name)) return name
  return decoded
}

/**
 * `HandoffRow` decoded by hand, for the rows every preview and listing reads: the same columns held to the same
 * types (test/catalog/HandoffRowDecoding.test.ts compares the two on rows right and wrong), at a fraction of the
 * cost. Schema walks each of the 21 fields through its parser, and every int8 column fails its first union member
 * before the second reads the string: in a tight loop 170 µs for a listing's page of 21 rows with their count,
 * against 9 by hand. In the desk (bench:compare, four alternating rounds, all four cheaper) a page by tag went
 * from 3.3 to 2.6 ms of CPU and a text search from 3.5 to 3.3 on a slow host. A row holds the preview's columns as
 * the object `preview` (`previewJson`), and beside it, with `total`, the count of the listing it belongs to.
 */
const fastRow = <Extra extends Record<string, number>, Optional extends Record<string, number> = {}>(
  extra: ReadonlyArray<keyof Extra & string>,
  optional: ReadonlyArray<keyof Optional & string> = []
) =>
  Schema.declare<HandoffRow & Extra & Partial<Optional>, unknown, []>([], {
    decode: () => (input, _, ast) => {
      if (!isRecord(input) || !isRecord(input.preview)) {
        return ParseResult.fail(new ParseResult.Type(ast, input, "a row is an object with its preview's columns"))
      }
      const decoded = decodeRow(input.preview, input, extra, optional)
      return typeof decoded === "string"
        ? ParseResult.fail(new ParseResult.Type(ast, input, `column ${decoded} is not a handoff's`))
        : ParseResult.succeed(decoded as HandoffRow & Extra & Partial<Optional>)
    },
    encode: () => ParseResult.succeed
  }, { identifier: "HandoffRow" })

export const HandoffRowDecoded = fastRow<{}>([])
/** How many rows a listing's statement read, where the database cut its page to the budget (src/Catalog/Search.ts). */
type PageRows = { readonly page_rows: number }
/** A listing's row: its preview, `page_rows` where the page was cut in the database, and with `total` its count. */
export const ListedRow = fastRow<{}, PageRows>([], ["page_rows"])
export const ListedRowWithTotal = fastRow<{ readonly total: number }, PageRows>(["total"], ["page_rows"])
export type ListedRow = typeof ListedRow.Type

export const NewHandoff = Schema.Struct({
  title: Schema.String,
  teaser: Schema.String,
  body: Schema.String,
  filer: Schema.String,
  filer_did: Schema.String,
  price_micro: Schema.Number,
  reconstruct_micro: Schema.Number,
  minutes: Schema.NullOr(Schema.Number),
  tags: Schema.Array(Schema.String),
  contains: Schema.Array(Schema.String),
  does_not_contain: Schema.Array(Schema.String),
  why_pay: Schema.String,
  provenance: Schema.NullOr(Schema.Unknown),
  origin: Origin,
  is_demo: Schema.Boolean,
  hash: Schema.String,
  /** SHA-256 of the normalized body, unique across handoffs; null for the demo packet (reserved in code). */
  body_key: Schema.NullOr(Schema.String),
  body_chars: Schema.Number
})
export type NewHandoff = typeof NewHandoff.Type
