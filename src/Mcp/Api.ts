import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"

/** Where the MCP server answers (src/Mcp/Http.ts). */
export const MCP_PATH = "/mcp"

const JsonObject = (identifier: string, description: string) =>
  Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier, description })

const JsonRpcErrorFields = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  error: Schema.Struct({ code: Schema.Int, message: Schema.String }),
  id: Schema.optional(Schema.Union(Schema.String, Schema.Number, Schema.Null))
})

/** The transport's refusals (a message that is not JSON-RPC, a batch) are JSON-RPC errors, not the desk's envelopes. */
export const JsonRpcError = JsonRpcErrorFields.annotations({
  identifier: "JsonRpcError",
  description: "A JSON-RPC 2.0 error response",
  ...HttpApiSchema.annotations({ status: 400 })
})

/** The refusal of an Accept header that does not take JSON, the only form the answer comes in. */
export const JsonRpcNotAcceptable = JsonRpcErrorFields.annotations({
  identifier: "JsonRpcNotAcceptable",
  description: "A JSON-RPC 2.0 error response: Accept must admit application/json (the answer is never a stream)",
  ...HttpApiSchema.annotations({ status: 406 })
})

/** A request from a browser page of another site (DNS rebinding protection, src/Mcp/Transport.ts). */
export const JsonRpcForbidden = JsonRpcErrorFields.annotations({
  identifier: "JsonRpcForbidden",
  description: "A JSON-RPC 2.0 error response: the Origin header names neither the desk's public URL nor this machine",
  ...HttpApiSchema.annotations({ status: 403 })
})

export const McpHeaders = Schema.Struct({
  "x-agent-id": Schema.optional(
    Schema.String.annotations({ description: "Your identity, used when a tool call has no agentId argument." })
  )
})

/**
 * The MCP endpoint, described by the HttpApi like every route. Its handler is raw: the official SDK reads the
 * JSON-RPC message and writes the answer, so the schemas here document the exchange and decode nothing.
 */
export class McpApi extends HttpApiGroup.make("mcp")
  .add(
    HttpApiEndpoint.post("postMcp", MCP_PATH)
      .setHeaders(McpHeaders)
      .setPayload(JsonObject("JsonRpcMessage", "A JSON-RPC 2.0 message"))
      .addSuccess(JsonObject("JsonRpcResponse", "A JSON-RPC response; tool failures are results with isError true"))
      .addSuccess(HttpApiSchema.Empty(202).annotations({ description: "A notification or response was accepted" }))
      .addError(JsonRpcError)
      .addError(JsonRpcForbidden)
      .addError(JsonRpcNotAcceptable)
      .annotate(OpenApi.Summary, "Model Context Protocol: JSON-RPC over stateless Streamable HTTP, answered as JSON")
      .annotate(
        OpenApi.Description,
        "400: not a valid JSON-RPC message, or a batch (an array of messages): MCP has no batching, send one per " +
          "POST. 403: an Origin header (a browser page) that is neither the desk's public URL nor this machine " +
          "(localhost, 127.0.0.1, [::1]), refused against DNS rebinding. 406: an Accept that does not admit " +
          "application/json (absent, application/json, application/* or */* do; text/event-stream beside it is " +
          "welcome, as Streamable HTTP clients send it, but the answer is always JSON)."
      )
  )
  .annotate(OpenApi.Title, "MCP")
{}
