import { Migrator } from "@effect/sql"
import catalog from "./0001_catalog.ts"
import ledger from "./0002_ledger.ts"
import settlement from "./0003_settlement.ts"
import searchIndexes from "./0004_search_indexes.ts"
import hotUpdates from "./0005_hot_updates.ts"

/** Every migration, by file name; a test checks this registry against the directory. */
export const migrations = {
  "0001_catalog": catalog,
  "0002_ledger": ledger,
  "0003_settlement": settlement,
  "0004_search_indexes": searchIndexes,
  "0005_hot_updates": hotUpdates
}

export const loader = Migrator.fromRecord(migrations)
