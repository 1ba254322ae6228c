import { Schema } from "effect"
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

export const PREVIEW_COLUMNS = Object.keys(HandoffRow.fields)

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
