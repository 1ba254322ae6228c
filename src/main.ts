import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, Option } from "effect"
import { LedgerOnlySettlement, RateLimiterLive, ReceiptSigningLive, SettlementLive, StoreLive } from "./Adapters.ts"
import { Catalog } from "./Catalog.ts"
import { PreviewCache } from "./Catalog/PreviewCache.ts"
import { isWorker, superviseWorkers, tellCannotStart, tellReady, WorkerExited, workersConfig } from "./Cluster.ts"
import { DeskConfig } from "./Config.ts"
import { DeskLive } from "./Desk.ts"
import { ClientConcurrency } from "./Http/ClientConcurrency.ts"
import { TrustedProxies } from "./Http/ClientIp.ts"
import * as NodeServer from "./Http/NodeServer.ts"
import * as JsonLogger from "./JsonLogger.ts"
import { readSeedFile, seedListings } from "./Seed.ts"
import { migrated } from "./Sql.ts"
import { startupReason } from "./Startup.ts"
import { StoreSettingsChecked } from "./StoreSettings.ts"

/** The chosen store, migrated before the desk uses it. */
const StorageLive = migrated(StoreLive)

const DeskMainLive = DeskLive.pipe(
  Layer.provide(StorageLive),
  Layer.provide([RateLimiterLive, ReceiptSigningLive, TrustedProxies.layerConfig, ClientConcurrency.layerConfig]),
  // Built before the store (an outer provide is built first): a chain setting, HOST or PORT that cannot work
  // fails at once instead of after the embedded database has spent seconds opening. Requests that arrive
  // meanwhile wait for the API (NodeServer.holdUntilServed).
  Layer.provide(SettlementLive),
  Layer.provide(StoreSettingsChecked),
  Layer.provide(NodeServer.layerConfig.pipe(Layer.provide(TrustedProxies.layerConfig))),
  Layer.provide(DeskConfig.layer),
  Layer.provide(JsonLogger.layer),
  // No trace exporter is configured: spans would be built on every request only to be dropped.
  Layer.provide(Layer.setTracerEnabled(false))
)

const STARTING = "handoff-desk: cannot start"

/**
 * Failures are one line on stderr, not a stack trace; the program then fails, so the runtime exits 1 at once
 * instead of waiting for handles a half-built layer left open. A worker that cannot start tells its primary
 * instead, which says it once for all of them.
 */
const reportFailure = (prefix: string) => (cause: Cause.Cause<unknown>) =>
  Effect.zipRight(
    isWorker && prefix === STARTING
      ? Effect.promise(() => tellCannotStart(startupReason(cause)))
      : Effect.sync(() => process.stderr.write(`${prefix}: ${startupReason(cause)}\n`)),
    Effect.failCause(cause)
  )

/**
 * A promise that a library starts and then abandons must not end the desk with every request in it, as Node's
 * default does: it is logged as an error and the desk goes on (each request's own failures are typed effects).
 */
process.on("unhandledRejection", (reason) => {
  const cause = reason instanceof Error ? reason.message : String(reason)
  process.stderr.write(
    `${
      JSON.stringify({ message: "Unhandled rejection", logLevel: "ERROR", timestamp: new Date().toISOString(), cause })
    }\n`
  )
})

const [command, ...args] = process.argv.slice(2)

/** One desk in this process, or DESK_WORKERS desks forked from it on the same port. */
const serve = isWorker
  ? Layer.launch(DeskMainLive.pipe(Layer.tap(() => Effect.sync(tellReady))))
  : Effect.flatMap(workersConfig, (n) => n === 1 ? Layer.launch(DeskMainLive) : superviseWorkers(n))

/** `main.ts` runs the desk; `main.ts seed <file.json>` (npm run seed) imports seed listings into the same store. */
const program = command === "seed"
  ? readSeedFile(args[0]).pipe(
    Effect.flatMap((listings) =>
      seedListings(listings).pipe(
        // Seeding moves no money: the desk-receipt rail stands in for whatever chain the desk settles on.
        Effect.provide(
          Catalog.layer.pipe(
            Layer.provide([LedgerOnlySettlement, PreviewCache.none]),
            Layer.provideMerge(StorageLive),
            Layer.provide(DeskConfig.layer)
          )
        )
      )
    ),
    Effect.catchAllCause(reportFailure("seed"))
  )
  : serve.pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : reportFailure(
          Option.exists(Cause.failureOption(cause), (error) => error instanceof WorkerExited)
            ? "handoff-desk: stopped"
            : STARTING
        )(cause)
    )
  )

program.pipe(NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true }))
