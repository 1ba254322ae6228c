import { Schema } from "effect"

/** int8 and numeric arrive as strings from node-postgres and as numbers from PGlite; accept both. */
export const DbInt = Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int()))

export const DbDate = Schema.Union(Schema.DateFromSelf, Schema.DateFromString)
