import { Schema } from "effect"

/** int8 and numeric arrive as strings from node-postgres and as numbers from PGlite; accept both. */
export const DbInt = Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int()))

/**
 * A kept sum of amounts or counts (numeric in the database, exact there), read as the nearest JSON number. Past
 * 2^53 micro-USDC (about 9 billion USD of sales, which desk receipts let anyone record for free) no safe integer
 * holds it, and refusing it as DbInt did turned every page that shows it into a 500.
 */
export const DbSum = Schema.Union(Schema.Number, Schema.NumberFromString).pipe(Schema.filter(Number.isFinite))

export const DbDate = Schema.Union(Schema.DateFromSelf, Schema.DateFromString)
