import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { Effect, Option } from "effect"
import { DeskApi } from "../Api.ts"
import { DeskConfig } from "../Config.ts"
import { publishedSigner } from "../Desk/Responses.ts"
import { serverCard, toolsDocument } from "../Mcp/ServerCard.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { RailProfile } from "../Settlement.ts"
import { renderDocuments, templateValues } from "./Documents.ts"

export const DiscoveryHttp = HttpApiBuilder.group(DeskApi, "discovery", (handlers) =>
  Effect.gen(function*() {
    const rail = yield* RailProfile
    const { policy } = yield* RateLimiter
    const docs = yield* renderDocuments(templateValues(yield* DeskConfig, rail, policy))
    const openApi: Record<string, unknown> = { ...OpenApi.fromApi(DeskApi) }
    const { publicUrl } = yield* DeskConfig
    const { key } = yield* ReceiptSigning
    const card = serverCard(publicUrl, Option.getOrNull(Option.map(key, (_) => publishedSigner(_, publicUrl))))
    const tools = toolsDocument(publicUrl)
    return handlers
      .handle("llms", () => Effect.succeed(docs.llms))
      .handle("agentsMd", () => Effect.succeed(docs.agentsMd))
      .handle("agentsTxt", () => Effect.succeed(docs.agentsTxt))
      .handle("agentsJson", () => Effect.succeed(docs.agentsJson))
      .handle("index", () => Effect.succeed(docs.index))
      .handle("starter", () => Effect.succeed(docs.starter))
      .handle("getToolsJson", () => Effect.succeed(tools))
      .handle("getWellKnownMcpServerCardJson", () => Effect.succeed(card))
      .handle("getWellKnownMcpServerCard", () => Effect.succeed(card))
      .handle("openapi", () => Effect.succeed(openApi))
  }))
