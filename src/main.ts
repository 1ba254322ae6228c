import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, Effect, Layer, Option } from "effect"
import * as DeskReceipt from "../adapters/settlement/DeskReceipt.ts"
import * as X402 from "../adapters/settlement/X402.ts"
import { DeskConfig } from "./Config.ts"
import { DeskLive } from "./Desk.ts"
import { TrustedProxies } from "./Http/ClientIp.ts"
import * as NodeServer from "./Http/NodeServer.ts"
import * as JsonLogger from "./JsonLogger.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { SqlLive } from "./Sql.ts"

/** Adapters are chosen here, from configuration, and nowhere else: x402 when a chain RPC is configured. */
const SettlementLive = Layer.unwrapEffect(
  Effect.map(
    Config.string("DESK_CHAIN_RPC_URL").pipe(Config.option, Config.map(Option.filter((_) => _.trim() !== ""))),
    (rpcUrl) => (Option.isSome(rpcUrl) ? X402.layerConfig : DeskReceipt.layer)
  )
)

const MainLive = DeskLive.pipe(
  Layer.provide(NodeServer.layerConfig),
  Layer.provide(SettlementLive),
  Layer.provide([RateLimiter.layerConfig, TrustedProxies.layerConfig]),
  Layer.provide(SqlLive),
  Layer.provide(DeskConfig.layer),
  Layer.provide(JsonLogger.layer),
  // No trace exporter is configured: spans would be built on every request only to be dropped.
  Layer.provide(Layer.setTracerEnabled(false))
)

/** Startup failures (bad configuration, unreachable database) are one line on stderr, not a stack trace. */
const reportStartupFailure = (cause: Cause.Cause<unknown>) =>
  Effect.sync(() => {
    process.stderr.write(`handoff-desk: cannot start: ${reasonOf(Cause.squash(cause)).split("\n")[0]}\n`)
    process.exitCode = 1
  })

/** The first message down the chain of causes: a failed listen is a ServeError with no message of its own. */
const reasonOf = (failure: unknown): string => {
  let current = failure
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current.message.trim() !== "") return current.message
    current = current.cause
  }
  return current instanceof Error || current === undefined ? "unknown failure" : String(current)
}

Layer.launch(MainLive).pipe(
  Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : reportStartupFailure(cause))),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
