import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListToolsRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
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
      // The SDK answers a thrown error with its code and message. McpError's message starts "MCP error -32602: ",
      // and the SDK client puts that before the message it reads, which then said it twice.
      throw Object.assign(new Error(`Unknown tool ${request.params.name}; see tools/list.`), {
        code: ErrorCode.InvalidParams
      })
    }
    return Runtime.runPromise(runtime, call.value, { signal: extra.signal })
  })
  return server
}

const jsonRpcError = (id: string | number | null, code: ErrorCode, message: string, status: number) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", id, error: { code, message } }, { status })

/** JSON-RPC's Parse error (the SDK's answer to a body that is no JSON): the body guard's refusal at /mcp. */
export const parseError = (message: string) => jsonRpcError(null, ErrorCode.ParseError, `Parse error: ${message}`, 400)

/** An empty body passes the body guard, which parses only a body that has text, and is no JSON at all. */
const emptyBody = parseError("send one JSON-RPC message as JSON.")

/**
 * The MCP revisions since 2025-06-18 have no JSON-RPC batching (at any length: the body guard leaves a list over its
 * limit to /mcp, src/Http/Server.ts), and a batch would let one HTTP request (one
 * unit of the rate limit) do the work of a hundred: refused whole, before any message in it runs.
 */
const batchRefused = jsonRpcError(
  null,
  ErrorCode.InvalidRequest,
  "JSON-RPC batches are not supported (MCP has no batching since 2025-06-18): send one message per POST.",
  400
)

/** Valid JSON that is no JSON-RPC message: JSON-RPC 2.0's Invalid Request (the SDK answers -32700, Parse error). */
const notJsonRpc = jsonRpcError(
  null,
  ErrorCode.InvalidRequest,
  "Invalid Request: not a JSON-RPC 2.0 request, notification or response (jsonrpc \"2.0\", a method or a result " +
    "or error, an integer or string id, params an object).",
  400
)

interface ParamsSchema {
  readonly safeParse: (value: unknown) =>
    | { readonly success: true }
    | {
      readonly success: false
      readonly error: {
        readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>
      }
    }
}

/**
 * The requests this server answers whose params have a shape. The SDK parses them by these schemas too, but a
 * failure there escapes as a bare ZodError, answered -32603 Internal error; checked first, it is -32602.
 */
const PARAMS_SCHEMAS = new Map<string, ParamsSchema>(
  [CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema].map((schema) => [
    schema.shape.method.value,
    schema
  ])
)

/**
 * The refusal of a message the SDK would not answer as JSON-RPC 2.0 says, if it is one: a batch, a value that is no
 * JSON-RPC message (400, id null), a request whose params do not fit its method (200, with the request's id).
 * An unknown tool (-32602) and arguments outside a tool's input schema (an isError result) stay the SDK's and the
 * tools' business.
 */
const refusal = (message: unknown) => {
  if (Array.isArray(message)) return Option.some(batchRefused)
  if (!JSONRPCMessageSchema.safeParse(message).success) return Option.some(notJsonRpc)
  if (!isJSONRPCRequest(message)) return Option.none()
  const parsed = PARAMS_SCHEMAS.get(message.method)?.safeParse(message)
  if (parsed === undefined || parsed.success) return Option.none()
  const problems = parsed.error.issues.map((issue) =>
    `${issue.path.join(".")}: ${issue.message.replace(/^Invalid input: /, "")}`
  )
  return Option.some(jsonRpcError(message.id, ErrorCode.InvalidParams, `Invalid params: ${problems.join("; ")}`, 200))
}

const parseBody = (body: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(body))
  } catch {
    return Option.none()
  }
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Whether a request sent from `origin` may reach the MCP server, as the Streamable HTTP transport requires against
 * DNS rebinding: none sent (no browser), the desk's own public origin, or a page served from this machine. A page
 * whose name was rebound to the desk's address still sends its own name as Origin, and is refused.
 */
export const originAllowed = (origin: string | undefined, publicUrl: string): boolean => {
  if (origin === undefined) return true
  try {
    const url = new URL(origin)
    return url.origin === new URL(publicUrl).origin || LOOPBACK.has(url.hostname)
  } catch {
    return false
  }
}

// -32000, as the SDK's own transport answers a foreign Origin when it checks one.
const foreignOrigin = (origin: string) =>
  jsonRpcError(
    null,
    ErrorCode.ConnectionClosed,
    `Forbidden: Origin ${
      JSON.stringify(origin.slice(0, 200))
    } is neither this desk's public URL nor this machine (DNS rebinding protection); call the desk from its own ` +
      "origin, or from no browser.",
    403
  )

/** Whether an Accept header lets the answer be JSON: none, or a media range of it with a weight above 0. */
export const admitsJson = (accept: string | null) =>
  accept === null || accept.trim() === "" || accept.split(",").some((range) => {
    const [type, ...params] = range.split(";").map((_) => _.trim().toLowerCase())
    const refused = params.some((param) => /^q=0(\.0{0,3})?$/.test(param))
    return !refused && (type === "application/json" || type === "application/*" || type === "*/*")
  })

/**
 * Stateless Streamable HTTP: a fresh server and transport per POST, answered with JSON (no SSE stream),
 * so every response is complete when it leaves and no session outlives its request.
 */
export const handlePost = (calls: ToolCalls["Type"], publicUrl: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const origin = request.headers["origin"]
    if (!originAllowed(origin, publicUrl)) return foreignOrigin(origin!)
    // The body guard has read and cached the text already; the node stream cannot be read twice. It parses the
    // text to check it but hands on only the text: parsed here, and the SDK is given the value, not the text again.
    const message = parseBody(yield* Effect.orDie(request.text))
    if (Option.isNone(message)) return emptyBody
    const refused = refusal(message.value)
    if (Option.isSome(refused)) return refused.value
    const runtime = yield* Effect.runtime<never>()
    // The route's own path, not the client's spelling: the router also takes `//mcp;[`, which URL cannot parse.
    // A body without a Content-Type is JSON, as on every REST route (the body guard refuses any other type first).
    const headers = new Headers(request.headers)
    if (!headers.has("content-type")) headers.set("content-type", "application/json")
    // The answer is JSON, never a stream: a client that takes JSON is served (the spec's clients send
    // `Accept: application/json`), though the SDK asks for text/event-stream beside it.
    if (admitsJson(headers.get("accept"))) headers.set("accept", "application/json, text/event-stream")
    const webRequest = new Request(new URL("/mcp", publicUrl), { method: "POST", headers })
    const response = yield* Effect.acquireUseRelease(
      Effect.promise(async () => {
        const server = makeServer(calls, runtime)
        const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
        await server.connect(transport)
        return { server, transport }
      }),
      ({ transport }) =>
        Effect.promise(async () => {
          const answer = await transport.handleRequest(webRequest, { parsedBody: message.value })
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
