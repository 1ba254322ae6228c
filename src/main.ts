import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Layer, Logger } from "effect"
import { createServer } from "node:http"
import * as DeskReceipt from "../adapters/settlement/DeskReceipt.ts"
import { DeskConfig } from "./Config.ts"
import { DeskLive } from "./Desk.ts"
import { TrustedProxies } from "./Http/ClientIp.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { SqlLive } from "./Sql.ts"

const ServerLive = Layer.unwrapEffect(
  Effect.map(DeskConfig, (config) => NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
)

/** Adapters are chosen here, from configuration, and nowhere else. */
const SettlementLive = DeskReceipt.layer

const MainLive = DeskLive.pipe(
  Layer.provide(ServerLive),
  Layer.provide(SettlementLive),
  Layer.provide([RateLimiter.layerConfig, TrustedProxies.layerConfig]),
  Layer.provide(SqlLive),
  Layer.provide(DeskConfig.layer),
  Layer.provide(Logger.json)
)

/** Startup failures (bad configuration, unreachable database) are one line on stderr, not a stack trace. */
const reportStartupFailure = (cause: Cause.Cause<unknown>) =>
  Effect.sync(() => {
    const failure = Cause.squash(cause)
    const text = failure instanceof Error ? failure.message : String(failure)
    process.stderr.write(`handoff-desk: cannot start: ${text.split("\n")[0]}\n`)
    process.exitCode = 1
  })

Layer.launch(MainLive).pipe(
  Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : reportStartupFailure(cause))),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
