import type { SqlClient } from "@effect/sql"
import { Layer, Option } from "effect"
import * as DeskReceipt from "../../adapters/settlement/DeskReceipt.ts"
import { Catalog } from "../../src/Catalog.ts"
import { DeskConfig } from "../../src/Config.ts"
import { Identity } from "../../src/Identity.ts"
import { Ledger } from "../../src/Ledger.ts"
import { migrated } from "../../src/Sql.ts"

/** The domain services over a migrated store, without HTTP: for service-level and property tests. */
export const servicesOn = <E>(storage: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.mergeAll(Catalog.layer, Ledger.layer, Identity.layer).pipe(
    Layer.provideMerge(DeskReceipt.layer),
    Layer.provideMerge(migrated(storage)),
    Layer.provideMerge(DeskConfig.layerWith({ publicUrl: "http://desk.test", databaseUrl: Option.none() }))
  )
