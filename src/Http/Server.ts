import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { flow, Layer } from "effect"
import { DeskApi } from "../Api.ts"
import { CatalogHttp } from "../Catalog/Http.ts"
import { DeskInfoHttp } from "../Desk/Http.ts"
import { GuideHttp } from "../Guide/Http.ts"
import { AgentsHttp } from "../Identity/Http.ts"
import { LedgerHttp } from "../Ledger/Http.ts"
import { bodyGuard } from "./BodyGuard.ts"
import { FailuresLive } from "./Failures.ts"
import { rateLimit } from "./RateLimit.ts"
import { requestId } from "./RequestId.ts"

export const ApiLive = HttpApiBuilder.api(DeskApi).pipe(Layer.provide([CatalogHttp, GuideHttp, LedgerHttp, AgentsHttp, DeskInfoHttp]))

const middleware = flow(bodyGuard, rateLimit, HttpMiddleware.logger, requestId)

/** The desk's HTTP app on whatever HttpServer is provided (Node in production, an ephemeral port in tests). */
export const HttpLive = HttpApiBuilder.serve(middleware).pipe(
  Layer.provide(FailuresLive),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(ApiLive),
  HttpServer.withLogAddress
)
