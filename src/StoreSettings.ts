import { Effect, Layer } from "effect"
import { previewCacheConfig } from "./Catalog/PreviewCache.ts"
import { minFreeDiskConfig } from "./Desk/DiskSpace.ts"
import { poolSizeConfig, statementTimeoutConfig } from "./Storage.ts"

/**
 * The settings the desk uses only once its store is open, read before the store is: a bad one stops the desk in a
 * second, in one line, before an embedded database is created for nothing (it took 25 s on a fresh directory).
 */
export const StoreSettingsChecked = Layer.effectDiscard(
  Effect.all([poolSizeConfig, statementTimeoutConfig, minFreeDiskConfig, previewCacheConfig])
)
