import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { DeskConfig } from "../Config.ts"
import { publishedSigner } from "../Desk/Responses.ts"
import { MCP_PATH } from "../Discovery/BesideApi.ts"
import { MethodNotAllowed } from "../Domain/Errors.ts"
import { errorResponse } from "../Http/Respond.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { serverCard, toolsDocument } from "./ServerCard.ts"
import { ToolCalls } from "./ToolCalls.ts"
import { handlePost } from "./Transport.ts"

/** Stateless: there is no server-initiated SSE stream to GET and no session to DELETE. */
const postOnly = Effect.succeed(
  errorResponse(
    MethodNotAllowed,
    new MethodNotAllowed({ message: `${MCP_PATH} takes JSON-RPC messages by POST only (stateless Streamable HTTP).` }),
    { allow: "POST" }
  )
)

/** Beside the HttpApi on its router, so the same serve-level middleware (rate limit, body guard) applies. */
export const McpRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const calls = yield* ToolCalls
    const { publicUrl } = yield* DeskConfig
    const { key } = yield* ReceiptSigning
    const signer = Option.getOrNull(Option.map(key, (_) => publishedSigner(_, publicUrl)))
    const card = HttpServerResponse.unsafeJson(serverCard(publicUrl, signer))
    yield* router.post(MCP_PATH, handlePost(calls, publicUrl))
    yield* router.get(MCP_PATH, postOnly)
    yield* router.del(MCP_PATH, postOnly)
    yield* router.get("/tools.json", Effect.succeed(HttpServerResponse.unsafeJson(toolsDocument(publicUrl))))
    yield* router.get("/.well-known/mcp/server-card.json", Effect.succeed(card))
    yield* router.get("/.well-known/mcp/server-card", Effect.succeed(card))
  })
).pipe(Layer.provide(ToolCalls.layer))
