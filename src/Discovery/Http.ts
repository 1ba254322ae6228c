import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Option } from "effect"
import { DeskApi } from "../Api.ts"
import { DeskConfig } from "../Config.ts"
import { publishedSigner } from "../Desk/Responses.ts"
import { serverCard, toolsDocument } from "../Mcp/ServerCard.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { RailProfile } from "../Settlement.ts"
import { MARKDOWN, PLAIN_TEXT } from "./Api.ts"
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
    // Each answer encoded once, here: through its schema, a document was encoded again on every request (7 KB of
    // UTF-8 for llms.txt; a walk and a stringify of the whole OpenAPI document for openapi.json).
    const text = (body: string, contentType: string) => {
      const response = HttpServerResponse.uint8Array(new TextEncoder().encode(body), { contentType })
      return () => Effect.succeed(response)
    }
    const json = (document: unknown) => {
      const response = HttpServerResponse.unsafeJson(document)
      return () => Effect.succeed(response)
    }
    return handlers
      .handle("llms", text(docs.llms, PLAIN_TEXT))
      .handle("agentsMd", text(docs.agentsMd, MARKDOWN))
      .handle("agentsTxt", text(docs.agentsTxt, PLAIN_TEXT))
      .handle("agentsJson", json(docs.agentsJson))
      .handle("index", json(docs.index))
      .handle("starter", text(docs.starter, MARKDOWN))
      .handle("getToolsJson", json(tools))
      .handle("getWellKnownMcpServerCardJson", json(card))
      .handle("getWellKnownMcpServerCard", json(card))
      .handle("openapi", json(openApi))
  }))
