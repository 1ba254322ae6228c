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

/** The desk's HTTP app on whatever HttpServer is provided (Node in production, an ephemeral port in tests). */
export const HttpLive = Layer.unwrapEffect(Effect.map(makeEdge, (edge) => HttpApiBuilder.serve(edge))).pipe(
  Layer.provide(FailuresLive),
  Layer.provide(McpRefusals),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress
)
