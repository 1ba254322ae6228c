import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { DeskApi } from "../Api.ts"
import { DeskConfig } from "../Config.ts"
import { MethodNotAllowed } from "../Domain/Errors.ts"
import { errorResponse } from "../Http/Respond.ts"
import { MCP_PATH } from "./Api.ts"
import { ToolCalls } from "./ToolCalls.ts"
import { handlePost } from "./Transport.ts"

/** POST /mcp: the official SDK reads the raw JSON-RPC message and answers it (src/Mcp/Transport.ts). */
export const McpHttp = HttpApiBuilder.group(DeskApi, "mcp", (handlers) =>
  Effect.gen(function*() {
    const calls = yield* ToolCalls
    const { publicUrl } = yield* DeskConfig
    return handlers.handleRaw("postMcp", () => handlePost(calls, publicUrl))
  })).pipe(Layer.provide(ToolCalls.layer))

/** Stateless: there is no server-initiated SSE stream to GET and no session to DELETE. */
const postOnly = Effect.succeed(
  errorResponse(
    MethodNotAllowed,
    new MethodNotAllowed({ message: `${MCP_PATH} takes JSON-RPC messages by POST only (stateless Streamable HTTP).` }),
    { allow: "POST" }
  )
)

/**
 * GET and DELETE on /mcp only ever answer 405, which an HttpApi endpoint (always declaring a success) cannot
 * state: they stay on the API's router, beside it, and src/Discovery/BesideApi.ts documents them.
 */
export const McpRefusals = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    yield* router.get(MCP_PATH, postOnly)
    yield* router.del(MCP_PATH, postOnly)
  })
)
