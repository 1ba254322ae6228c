import { Effect, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import type { DeskId } from "../../src/Domain/Ids.ts"
import { filing } from "./Fixtures.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

/** Files the fixture filing with `overrides` as `filer` through the Catalog service; its handoff id. */
export const filedAs = (filer: DeskId, overrides: Record<string, unknown>) =>
  Effect.flatMap(Catalog, (catalog) => catalog.file(filer, decodeFiling(filing(filer, overrides)))).pipe(
    Effect.map((_) => _.id as string)
  )
