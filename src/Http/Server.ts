import { Etag, FileSystem, HttpApi, HttpApiBuilder, HttpPlatform, HttpServer, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { CatalogHttp } from "../Catalog/Http.ts"
import { DeskConfig } from "../Config.ts"
import { DeskInfoHttp } from "../Desk/Http.ts"
import { speaksJsonRpc } from "../Desk/RequestRules.ts"
import { DiscoveryHttp } from "../Discovery/Http.ts"
import { routeList } from "../Discovery/RouteList.ts"
import { GuideHttp } from "../Guide/Http.ts"
import { Identity } from "../Identity.ts"
import { OptionalAgent, OptionalAgentLive, RequireAgent, RequireAgentLive } from "../Identity/AgentAuth.ts"
import { AgentsHttp } from "../Identity/Http.ts"
import { Ledger } from "../Ledger.ts"
import { LedgerHttp } from "../Ledger/Http.ts"
import { McpHttp, McpRefusals } from "../Mcp/Http.ts"
import { parseError } from "../Mcp/Transport.ts"
import { Owner } from "../Owner.ts"
import { invalidSearchAnswer, PagesHttp } from "../Pages/Http.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { SandboxHttp } from "../Sandbox/Http.ts"
import { RailProfile, Settlement } from "../Settlement.ts"
import { SignIn } from "../SignIn.ts"
import { allowedMethods, routedPath, routeFinder, routeTest } from "./AllowedMethods.ts"
import type { JsonRefusal } from "./BodyGuard.ts"
import { edgeFor } from "./Edge.ts"
import { failuresLive } from "./Failures.ts"
import { ServerStop } from "./InFlight.ts"
import { builtWithOnly } from "./OnlyContext.ts"

/** Each group of handlers is built with only the services it uses (see builtWithOnly: they stay on its requests). */
export const ApiLive = HttpApiBuilder.api(DeskApi).pipe(
  Layer.provide([
    CatalogHttp.pipe(builtWithOnly(Catalog, DeskConfig, RequireAgent)),
    GuideHttp.pipe(builtWithOnly(Catalog)),
    LedgerHttp.pipe(
      builtWithOnly(
        DeskConfig,
        Ledger,
        OptionalAgent,
        RailProfile,
        ReceiptSigning,
        RequireAgent,
        Settlement,
        SignIn
      )
    ),
    AgentsHttp.pipe(builtWithOnly(Identity, RequireAgent)),
    DeskInfoHttp.pipe(
      builtWithOnly(DeskConfig, RailProfile, RateLimiter, ReceiptSigning, Settlement, SqlClient.SqlClient)
    ),
    SandboxHttp.pipe(builtWithOnly(Catalog, DeskConfig, RailProfile)),
    DiscoveryHttp.pipe(
      builtWithOnly(DeskConfig, FileSystem.FileSystem, Path.Path, RailProfile, RateLimiter, ReceiptSigning)
    ),
    PagesHttp.pipe(builtWithOnly(Catalog, DeskConfig, Owner, RailProfile)),
    McpHttp.pipe(builtWithOnly(Catalog, DeskConfig, Ledger, RailProfile, RateLimiter, ReceiptSigning, Settlement))
  ]),
  Layer.provide([RequireAgentLive, OptionalAgentLive])
)

/** A server built with only the platform's services and the API: it runs every request on that context. */
export const servedOnPlatformAlone = builtWithOnly(
  HttpServer.HttpServer,
  HttpPlatform.HttpPlatform,
  FileSystem.FileSystem,
  Path.Path,
  Etag.Generator,
  HttpApi.Api
)

const routes = routeList(DeskApi)

/** The route of the API that takes a request, HEAD as its GET: no other request is judged before the router. */
const findRoute = routeFinder(routes)
const routeOf = (method: string, url: string) => findRoute(method === "HEAD" ? "GET" : method, url)

/** The routes that act as an identity (RequireAgent): the edge judges their X-AGENT-ID before their body. */
const actsAsAgent = routeTest(routes.filter(({ agentHeader }) => agentHeader === "required"))

/**
 * How /mcp refuses a body the body guard cannot read as JSON: JSON-RPC's Parse error, as the SDK answers one. A
 * list over the guard's limit is left to the message's own judges: a batch is refused as one (src/Mcp/Transport.ts),
 * a tool's list as the tool's error (src/Mcp/ToolCalls.ts), as REST answers it with its route's 422.
 */
const JSON_RPC_REFUSAL: JsonRefusal = { refuse: parseError, judgesLongLists: true }

const Served = Layer.unwrapEffect(
  Effect.map(
    // A JSON-RPC client hears of a body that is no JSON as JSON-RPC's Parse error, as from the SDK itself.
    edgeFor({
      isRoute: (method, url) => routeOf(method, url) !== undefined,
      actsAsAgent,
      jsonRefusalAt: (method, path) => speaksJsonRpc(method, path) ? JSON_RPC_REFUSAL : undefined,
      readsParam: (method, url, name) => routeOf(method, url)?.queryParams.has(name) ?? false,
      // The catalog page answers a browser with its 422 page, as for any invalid parameter.
      queryRefusal: (request, issue) =>
        routedPath(request.url) === "/" ? invalidSearchAnswer(request.headers.accept, [issue]) : undefined
    }),
    (edge) => HttpApiBuilder.serve(edge).pipe(servedOnPlatformAlone)
  )
).pipe(
  // The API's own routes: GET and DELETE on /mcp beside it are refusals, answered 405 with Allow: POST.
  Layer.provide(failuresLive(allowedMethods(routes))),
  Layer.provide(McpRefusals),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress
)

/**
 * When the desk stops (SIGTERM, SIGINT), its server stops taking requests and finishes those it took (ServerStop,
 * src/Http/InFlight.ts) first: this finalizer is added once the app serves, so it runs before the serving ends and
 * before the services and the store the requests use close. A server without ServerStop (tests) stops as it did.
 */
const finishingInFlight = Layer.scopedDiscard(
  Effect.flatMap(
    Effect.serviceOption(ServerStop),
    Option.match({ onNone: () => Effect.void, onSome: (stop) => Effect.addFinalizer(() => stop) })
  )
)

/** The desk's HTTP app on whatever HttpServer is provided (Node in production, an ephemeral port in tests). */
export const HttpLive = finishingInFlight.pipe(Layer.provide(Served))
