import { SqlClient } from "@effect/sql"
import { Console, Effect, ParseResult, Schema } from "effect"
import { readFileSync } from "node:fs"
import { Catalog } from "./Catalog.ts"
import { bodyKey } from "./Domain/BodyKey.ts"
import { FilingRequest } from "./Domain/Filing.ts"
import { describeIssues, issuesOf, SEE_TEMPLATE } from "./Domain/Issues.ts"

const SeedFile = Schema.parseJson(Schema.Array(FilingRequest)).annotations({ parseOptions: { errors: "all" } })

/** One line per seed file: "listing 2: priceUsd: must be …; body: …". */
const invalidFile = (path: string, error: ParseResult.ParseError) => {
  const issues = issuesOf(ParseResult.ArrayFormatter.formatErrorSync(error), SEE_TEMPLATE).map(({ message, path }) => {
    const [index, ...rest] = path.split(".")
    return /^\d+$/.test(index ?? "")
      ? { path: `listing ${Number(index) + 1}${rest.length > 0 ? `: ${rest.join(".")}` : ""}`, message }
      : { path, message }
  })
  return `${path} is not a JSON array of filing requests: ${describeIssues(issues)}`
}

/** The seed file, read and checked before any database opens, so a bad file is refused at once. */
export const readSeedFile = (path: string | undefined) =>
  Effect.gen(function*() {
    if (path === undefined) {
      return yield* Effect.fail("usage: npm run seed -- <file.json> (a JSON array of filing requests)")
    }
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (error) => `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`
    })
    return yield* Schema.decodeUnknown(SeedFile)(text).pipe(Effect.mapError((error) => invalidFile(path, error)))
  })

/** `npm run seed -- listings.json`: imports every listing with origin "seed", all or nothing. */
/**
 * A listing whose body an earlier one of the same file already holds: named here, before the import, as what it
 * is. Found in the import's own transaction, the earlier copy was named as listed (`already listed as DESK-53`),
 * an id the refusal then rolled back.
 */
const repeatedBody = (listings: ReadonlyArray<FilingRequest>): string | undefined => {
  const first = new Map<string, number>()
  for (const [index, listing] of listings.entries()) {
    const key = bodyKey(listing.body)
    const earlier = first.get(key)
    if (earlier !== undefined) {
      return `listing ${index + 1} ("${listing.title}"): its body is listing ${earlier + 1}'s ` +
        `("${listings[earlier]!.title}") again; nothing was imported`
    }
    first.set(key, index)
  }
  return undefined
}

export const seedListings = (listings: ReadonlyArray<FilingRequest>) =>
  Effect.gen(function*() {
    const repeated = repeatedBody(listings)
    if (repeated !== undefined) return yield* Effect.fail(repeated)
    const catalog = yield* Catalog
    const sql = yield* SqlClient.SqlClient
    const seedOne = (listing: FilingRequest, index: number) =>
      catalog.seed(listing).pipe(
        Effect.mapError((error) => `listing ${index + 1} ("${listing.title}"): ${error.message}`)
      )
    const previews = yield* sql.withTransaction(Effect.forEach(listings, seedOne)).pipe(
      Effect.mapError((
        error
      ) => (typeof error === "string" ? error : `the database refused the import: ${error.message}`))
    )
    for (const preview of previews) yield* Console.log(`${preview.id}\t${preview.origin}\t${preview.title}`)
    yield* Console.log(`seeded ${previews.length} listing(s)`)
  })
