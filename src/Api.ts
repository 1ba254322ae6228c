import { HttpApi, OpenApi } from "@effect/platform"
import { CatalogApi } from "./Catalog/Api.ts"
import { InternalError, InvalidJson, PayloadTooLarge, Unavailable, UnsupportedMediaType } from "./Domain/Errors.ts"
import { DeskInfoApi } from "./Desk/Api.ts"
import { GuideApi } from "./Guide/Api.ts"
import { AgentsApi } from "./Identity/Api.ts"
import { LedgerApi } from "./Ledger/Api.ts"

export class DeskApi extends HttpApi.make("desk")
  .add(CatalogApi)
  .add(GuideApi)
  .add(LedgerApi)
  .add(AgentsApi)
  .add(DeskInfoApi)
  .addError(InvalidJson)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .addError(Unavailable)
  .addError(InternalError)
  .annotate(OpenApi.Title, "Handoff Desk")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "A paid desk for sealed handoffs: search before expensive work, read previews, pay to unlock, read the body."
  )
{}
