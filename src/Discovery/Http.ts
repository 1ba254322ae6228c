import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { DeskConfig } from "../Config.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { Settlement } from "../Settlement.ts"
import { renderDocuments, templateValues } from "./Documents.ts"

export const DiscoveryHttp = HttpApiBuilder.group(DeskApi, "discovery", (handlers) =>
  Effect.gen(function*() {
    const { rail } = yield* Settlement
    const { policy } = yield* RateLimiter
    const docs = yield* renderDocuments(templateValues(yield* DeskConfig, rail, policy))
    const openApi: Record<string, unknown> = { ...OpenApi.fromApi(DeskApi) }
    return handlers
      .handle("llms", () => Effect.succeed(docs.llms))
      .handle("agentsMd", () => Effect.succeed(docs.agentsMd))
      .handle("agentsTxt", () => Effect.succeed(docs.agentsTxt))
      .handle("agentsJson", () => Effect.succeed(docs.agentsJson))
      .handle("index", () => Effect.succeed(docs.index))
      .handle("starter", () => Effect.succeed(docs.starter))
      .handle("openapi", () => Effect.succeed(openApi))
  }))
