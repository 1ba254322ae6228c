import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { DeskApi } from "../Api.ts"
import { CatalogHttp } from "../Catalog/Http.ts"
import { DeskInfoHttp } from "../Desk/Http.ts"
import { DiscoveryHttp } from "../Discovery/Http.ts"
import { GuideHttp } from "../Guide/Http.ts"
import { OptionalAgentLive, RequireAgentLive } from "../Identity/AgentAuth.ts"
import { AgentsHttp } from "../Identity/Http.ts"
import { LedgerHttp } from "../Ledger/Http.ts"
import { McpHttp, McpRefusals } from "../Mcp/Http.ts"
import { PagesHttp } from "../Pages/Http.ts"
import { SandboxHttp } from "../Sandbox/Http.ts"
import { makeEdge } from "./Edge.ts"
import { FailuresLive } from "./Failures.ts"

export const ApiLive = HttpApiBuilder.api(DeskApi).pipe(
  Layer.provide([
    CatalogHttp,
    GuideHttp,
    LedgerHttp,
    AgentsHttp,
    DeskInfoHttp,
    SandboxHttp,
    DiscoveryHttp,
    PagesHttp,
    McpHttp
  ]),
  Layer.provide([RequireAgentLive, OptionalAgentLive])
)

/**
 * The desk's HTTP app on whatever HttpServer is provided (Node in production, an ephemeral port in tests): the
 * edge wraps the API's app, as `HttpApiBuilder.serve` would do but inside the server's handler rather than
 * outside it, so the edge sees each response before it is sent.
 */
export const HttpLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const edge = yield* makeEdge
    return HttpServer.serve(edge(yield* HttpApiBuilder.httpApp))
  })
).pipe(
  Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]),
  Layer.provide(FailuresLive),
  Layer.provide(McpRefusals),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress
)
