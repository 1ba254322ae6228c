import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Effect, Option, Runtime } from "effect"
import { MCP_INSTRUCTIONS, MCP_SERVER } from "./ServerInfo.ts"
import type { ToolCalls } from "./ToolCalls.ts"
import { PUBLISHED_TOOLS } from "./Tools.ts"

const headerValue = (
  value: string | ReadonlyArray<string> | undefined
) => (typeof value === "string" ? value : value?.[0])

// Building an Ajv instance costs more than the rest of a request; one serves every per-request server.
const jsonSchemaValidator = new AjvJsonSchemaValidator()

/** The official SDK speaks the protocol; every tool call runs as an Effect on the request's runtime. */
const makeServer = (calls: ToolCalls["Type"], runtime: Runtime.Runtime<never>) => {
  const server = new Server(MCP_SERVER, {
    capabilities: { tools: { listChanged: false } },
    instructions: MCP_INSTRUCTIONS,
    jsonSchemaValidator
  })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...PUBLISHED_TOOLS] }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const agentHeader = headerValue(extra.requestInfo?.headers["x-agent-id"])
    const call = calls.call(request.params.name, request.params.arguments, agentHeader)
    if (Option.isNone(call)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; see tools/list.`)
    }
    return Runtime.runPromise(runtime, call.value, { signal: extra.signal })
  })
  return server
}

const isBatch = (body: string) => {
  try {
    return Array.isArray(JSON.parse(body))
  } catch {
    return false
  }
}

/**
 * The MCP revisions since 2025-06-18 have no JSON-RPC batching, and a batch would let one HTTP request (one
 * unit of the rate limit) do the work of a hundred: refused whole, before any message in it runs.
 */
const batchRefused = HttpServerResponse.unsafeJson(
  {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: ErrorCode.InvalidRequest,
      message: "JSON-RPC batches are not supported (MCP has no batching since 2025-06-18): send one message per POST."
    }
  },
  { status: 400 }
)

/**
 * Stateless Streamable HTTP: a fresh server and transport per POST, answered with JSON (no SSE stream),
 * so every response is complete when it leaves and no session outlives its request.
 */
export const handlePost = (calls: ToolCalls["Type"], publicUrl: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // The body guard has read and cached the text already; the node stream cannot be read twice.
    const body = yield* Effect.orDie(request.text)
    if (isBatch(body)) return batchRefused
    const runtime = yield* Effect.runtime<never>()
    // The route's own path, not the client's spelling: the router also takes `//mcp;[`, which URL cannot parse.
    const webRequest = new Request(new URL("/mcp", publicUrl), {
      method: "POST",
      headers: request.headers,
      body
    })
    const response = yield* Effect.acquireUseRelease(
      Effect.promise(async () => {
        const server = makeServer(calls, runtime)
        const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
        await server.connect(transport)
        return { server, transport }
      }),
      ({ transport }) =>
        Effect.promise(async () => {
          const answer = await transport.handleRequest(webRequest)
          return { status: answer.status, headers: answer.headers, text: await answer.text() }
        }),
      ({ server }) => Effect.promise(() => server.close())
    )
    const contentType = response.headers.get("content-type")
    return response.text === "" && contentType === null
      ? HttpServerResponse.empty({ status: response.status })
      : HttpServerResponse.text(response.text, {
        status: response.status,
        contentType: contentType ?? "application/json",
        headers: Object.fromEntries([...response.headers].filter(([name]) => name !== "content-type"))
      })
  })
