import type { SqlClient } from "@effect/sql"
import { Layer, Option } from "effect"
import * as DeskReceipt from "../../adapters/settlement/DeskReceipt.ts"
import { Catalog } from "../../src/Catalog.ts"
import { PreviewCache } from "../../src/Catalog/PreviewCache.ts"
import { DeskConfig } from "../../src/Config.ts"
import { Identity } from "../../src/Identity.ts"
import { Ledger } from "../../src/Ledger.ts"
import { ReceiptSigning } from "../../src/ReceiptSigning.ts"
import type { MoneyRails } from "../../src/Settlement.ts"
import { migrated } from "../../src/Sql.ts"

/** The domain services over a migrated store, without HTTP: for service-level and property tests. */
export const servicesOn = <E>(
  storage: Layer.Layer<SqlClient.SqlClient, E>,
  settlement: Layer.Layer<MoneyRails, unknown> = DeskReceipt.layer
) =>
  Layer.mergeAll(Catalog.layer, Ledger.layer, Identity.layer).pipe(
    Layer.provideMerge(settlement),
    Layer.provideMerge(ReceiptSigning.none),
    Layer.provideMerge(PreviewCache.layer),
    Layer.provideMerge(migrated(storage)),
    Layer.provideMerge(DeskConfig.layerWith({ publicUrl: "http://desk.test", databaseUrl: Option.none() }))
  )
