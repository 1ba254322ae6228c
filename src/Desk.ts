import { Effect, Layer } from "effect"
import { BackgroundLive } from "./Background.ts"
import { Catalog } from "./Catalog.ts"
import { PreviewCache } from "./Catalog/PreviewCache.ts"
import { HttpLive } from "./Http/Server.ts"
import { Identity } from "./Identity.ts"
import { Ledger } from "./Ledger.ts"
import { TallyFoldingLive } from "./Ledger/Tallies.ts"
import { Owner } from "./Owner.ts"
import { Payouts } from "./Payouts.ts"
import { PlannerStatisticsLive } from "./PlannerStatistics.ts"

/** Work done once at startup, after migrations: the sandbox's demo packet must exist. */
const StartupLive = Layer.effectDiscard(Effect.flatMap(Catalog, (catalog) => catalog.ensureDemo))

/**
 * Every service of the desk over a migrated SqlClient; the caller provides storage, config, the
 * Settlement adapter and the HTTP server.
 */
export const DeskLive = HttpLive.pipe(
  Layer.provide(StartupLive),
  Layer.merge(BackgroundLive),
  Layer.merge(TallyFoldingLive),
  Layer.merge(PlannerStatisticsLive),
  Layer.provideMerge(Layer.mergeAll(Catalog.layer, Ledger.layer, Identity.layer, Owner.layer)),
  Layer.provideMerge(Payouts.layer),
  // One cache per desk: the catalog reads through it, the ledger's changes hold ids out of it.
  Layer.provideMerge(PreviewCache.layer)
)
