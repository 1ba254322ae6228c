import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export const PLAIN_TEXT = "text/plain; charset=utf-8"
export const MARKDOWN = "text/markdown; charset=utf-8"

const PlainText = (description: string) => HttpApiSchema.Text({ contentType: PLAIN_TEXT }).annotations({ description })
const Markdown = (description: string) => HttpApiSchema.Text({ contentType: MARKDOWN }).annotations({ description })
const JsonDocument = (identifier: string, description: string) =>
  Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier, description })

// The MCP documents keep the operation ids they had when they were written beside the API.
const ServerCard = JsonDocument("McpServerCard", "The MCP server card (draft SEP-2127 and SEP-1649 members)")

/** Documents written for agents, rendered at startup from `static/` with the live routes; never rate limited. */
export class DiscoveryApi extends HttpApiGroup.make("discovery")
  .add(
    HttpApiEndpoint.get("llms", "/llms.txt")
      .addSuccess(PlainText("llms.txt: what the desk is, the standing order, where to start, every route"))
      .annotate(OpenApi.Summary, "Start here: the desk in one page for language models (llms.txt)")
  )
  .add(
    HttpApiEndpoint.get("agentsMd", "/AGENTS.md")
      .addSuccess(Markdown("AGENTS.md: instructions for coding agents"))
      .annotate(OpenApi.Summary, "Instructions for agents: standing order, identity, money, the loop, routes")
  )
  .add(
    HttpApiEndpoint.get("agentsTxt", "/agents.txt")
      .addSuccess(PlainText("agents.txt: one `Field: value` per line"))
      .annotate(OpenApi.Summary, "The same facts as lines of `Field: value`, for simple parsers")
  )
  .add(
    HttpApiEndpoint.get("agentsJson", "/agents.json")
      .addSuccess(
        JsonDocument("AgentsDocument", "Identity, payment, spend control, standing order, MCP tools and routes")
      )
      .annotate(OpenApi.Summary, "Machine-readable description of the desk for agents")
  )
  .add(
    HttpApiEndpoint.get("index", "/index.json")
      .addSuccess(JsonDocument("IndexDocument", "Every discovery document and route, with absolute URLs"))
      .annotate(OpenApi.Summary, "Index of the discovery documents and routes")
  )
  .add(
    HttpApiEndpoint.get("starter", "/starter.md")
      .addSuccess(Markdown("starter.md: the loop step by step with curl"))
      .annotate(OpenApi.Summary, "From nothing to a body in hand: the loop step by step")
  )
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json")
      .addSuccess(JsonDocument("OpenApiDocument", "This OpenAPI 3.1.0 document"))
      .annotate(OpenApi.Summary, "The OpenAPI 3.1.0 document: every route with its parameters, schemas and errors")
  )
  .add(
    HttpApiEndpoint.get("getToolsJson", "/tools.json")
      .addSuccess(JsonDocument("ToolsDocument", "name, mcp (transport, endpoint, url), identity, standingOrder, tools"))
      .annotate(OpenApi.Summary, "The MCP tools as tools/list returns them, and where to call them")
  )
  .add(
    HttpApiEndpoint.get("getWellKnownMcpServerCardJson", "/.well-known/mcp/server-card.json")
      .addSuccess(ServerCard)
      .annotate(OpenApi.Summary, "MCP server card: identity, remotes, capabilities and tools")
  )
  .add(
    HttpApiEndpoint.get("getWellKnownMcpServerCard", "/.well-known/mcp/server-card")
      .addSuccess(ServerCard)
      .annotate(OpenApi.Summary, "The MCP server card, at its extension-less address")
  )
  .annotate(OpenApi.Title, "Discovery")
  .annotate(OpenApi.Description, "Documents for agents; not rate limited.")
{}
