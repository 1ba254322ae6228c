import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Unavailable } from "../Domain/Errors.ts"
import { HealthResponse, JwksResponse, StatusResponse, SurfaceResponse } from "./Responses.ts"

export class DeskInfoApi extends HttpApiGroup.make("desk")
  .add(
    HttpApiEndpoint.get("status", "/api/status")
      .addSuccess(StatusResponse)
      .annotate(OpenApi.Summary, "Payment rail: network, asset, payTo, whether x402 and desk receipts are accepted")
  )
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .addSuccess(JwksResponse)
      .annotate(OpenApi.Summary, "The public key of JWS-signed offers and receipts (x402 offer-receipt), as a JWKS")
  )
  .add(
    HttpApiEndpoint.get("health", "/api/health")
      .addSuccess(HealthResponse)
      .addError(Unavailable)
      .annotate(
        OpenApi.Summary,
        "Liveness with database and payment-rail checks; 503 while the database is down, or the embedded " +
          "store's disk has less free space than DESK_MIN_FREE_DISK_MB"
      )
  )
  .add(
    HttpApiEndpoint.get("surface", "/api/surface")
      .addSuccess(SurfaceResponse)
      .annotate(OpenApi.Summary, "Everything an agent needs to start: identity, settlement, routes")
  )
  .annotate(OpenApi.Title, "Desk")
{}
