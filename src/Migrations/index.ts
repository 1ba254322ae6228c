import { Migrator } from "@effect/sql"
import catalog from "./0001_catalog.ts"

/** Every migration, by file name; a test checks this registry against the directory. */
export const migrations = {
  "0001_catalog": catalog
}

export const loader = Migrator.fromRecord(migrations)
