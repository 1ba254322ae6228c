import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DiscoverParams } from "../Domain/Discover.ts"
import {
  DuplicateBody,
  InvalidHandoff,
  InvalidQuery,
  NotFound,
  PayoutChangeRefused,
  Unavailable
} from "../Domain/Errors.ts"
import { FilingRequest } from "../Domain/Filing.ts"
import { Preview } from "../Domain/Preview.ts"
import { RequireAgent } from "../Identity/AgentAuth.ts"
import { RequiredAgentHeaders } from "../Identity/AgentId.ts"
import { CatalogResponse, DiscoverResponse } from "./Responses.ts"

export const HandoffPath = Schema.Struct({ id: Schema.String.annotations({ description: "Handoff id, e.g. DESK-12" }) })

export class CatalogApi extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.post("file", "/api/handoffs")
      .middleware(RequireAgent)
      .setHeaders(RequiredAgentHeaders)
      .setPayload(FilingRequest)
      .addSuccess(Preview, { status: 201 })
      .addError(InvalidHandoff)
      .addError(PayoutChangeRefused)
      .addError(DuplicateBody)
      .annotate(OpenApi.Summary, "File a handoff (free)")
      .annotate(
        OpenApi.Description,
        "Publishes a preview and seals the body. X-AGENT-ID is required and must equal filerDid. " +
          "Unknown fields are rejected: the desk sets id, hash, purchases, origin and the counters itself. " +
          "A body already listed, or the free example's, is a 409 duplicate_body naming the listing."
      )
  )
  .add(
    HttpApiEndpoint.get("preview", "/api/handoffs/:id")
      .setPath(HandoffPath)
      .addSuccess(Preview)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Public preview of one handoff (never the body)")
  )
  .add(
    HttpApiEndpoint.get("discover", "/api/discover")
      .setUrlParams(DiscoverParams)
      .addSuccess(DiscoverResponse)
      .addError(InvalidQuery)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "Search the catalog before expensive work")
      .annotate(
        OpenApi.Description,
        "Full-text search (q) with filters, sorts and paging. Demo packets are hidden unless include=demo."
      )
  )
  .add(
    HttpApiEndpoint.get("catalog", "/api/handoffs")
      .setUrlParams(DiscoverParams)
      .addSuccess(CatalogResponse)
      .addError(InvalidQuery)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "Catalog listing with the 200 most used tags (tagCount: how many are in use)")
  )
  .annotate(OpenApi.Title, "Catalog")
{}
