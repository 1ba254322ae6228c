import { HttpApi, OpenApi } from "@effect/platform"
import { CatalogApi } from "./Catalog/Api.ts"
import { DeskInfoApi } from "./Desk/Api.ts"
import { DiscoveryApi } from "./Discovery/Api.ts"
import { asServed } from "./Discovery/OpenApi.ts"
import {
  BadRequest,
  ExpectationFailed,
  HeadersTooLarge,
  InternalError,
  InvalidJson,
  InvalidQuery,
  PayloadTooLarge,
  RateLimited,
  RequestTimeout,
  UnsupportedMediaType
} from "./Domain/Errors.ts"
import { GuideApi } from "./Guide/Api.ts"
import { AgentsApi } from "./Identity/Api.ts"
import { LedgerApi } from "./Ledger/Api.ts"
import { McpApi } from "./Mcp/Api.ts"
import { PagesApi } from "./Pages/Api.ts"
import { SandboxApi } from "./Sandbox/Api.ts"

export class DeskApi extends HttpApi.make("desk")
  .add(CatalogApi)
  .add(GuideApi)
  .add(LedgerApi)
  .add(AgentsApi)
  .add(DeskInfoApi)
  .add(SandboxApi)
  .add(DiscoveryApi)
  .add(McpApi)
  .add(PagesApi)
  .addError(InvalidJson)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .addError(RateLimited)
  .addError(InternalError)
  // A query parameter whose %-escapes are not UTF-8, refused by the edge on any request that reads no body.
  .addError(InvalidQuery)
  // Node's own refusals, before any route is read: every operation can answer them.
  .addError(BadRequest)
  .addError(RequestTimeout)
  .addError(ExpectationFailed)
  .addError(HeadersTooLarge)
  .annotate(OpenApi.Title, "Handoff Desk")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "A paid desk for sealed handoffs: search before expensive work, read previews, pay to unlock, read the body."
  )
  .annotate(OpenApi.Transform, asServed)
{}
