import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Console, Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { Catalog } from "./Catalog.ts"
import { DeskConfig } from "./Config.ts"
import { FilingRequest } from "./Domain/Filing.ts"
import { SqlLive } from "./Sql.ts"

const SeedFile = Schema.parseJson(Schema.Array(FilingRequest))

/** `npm run seed -- listings.json`: imports every listing with origin "seed", all or nothing. */
const program = Effect.gen(function*() {
  const path = process.argv[2]
  if (path === undefined) return yield* Effect.fail("usage: npm run seed -- <file.json> (a JSON array of filing requests)")
  const listings = yield* Schema.decodeUnknown(SeedFile)(readFileSync(path, "utf8"))
  const catalog = yield* Catalog
  const sql = yield* SqlClient.SqlClient
  const previews = yield* sql.withTransaction(Effect.forEach(listings, catalog.seed))
  for (const preview of previews) yield* Console.log(`${preview.id}\t${preview.origin}\t${preview.title}`)
  yield* Console.log(`seeded ${previews.length} listing(s)`)
})

program.pipe(
  Effect.provide(Catalog.layer.pipe(Layer.provideMerge(SqlLive), Layer.provide(DeskConfig.layer))),
  Effect.catchAll((error) =>
    Effect.sync(() => {
      process.stderr.write(`seed: ${typeof error === "string" ? error : String(error)}\n`)
      process.exitCode = 1
    })
  ),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
