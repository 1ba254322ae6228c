import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { DemandResponse, ExamplePacket, TemplateResponse } from "./Responses.ts"

export class GuideApi extends HttpApiGroup.make("guide")
  .add(
    HttpApiEndpoint.get("example", "/api/example")
      .addSuccess(ExamplePacket)
      .annotate(OpenApi.Summary, "A free example packet with its body unsealed")
  )
  .add(
    HttpApiEndpoint.get("template", "/api/template")
      .addSuccess(TemplateResponse)
      .annotate(OpenApi.Summary, "Filing schema, pricing guide, standing order and a filled example")
  )
  .add(
    HttpApiEndpoint.get("demand", "/api/demand")
      .addSuccess(DemandResponse)
      .annotate(OpenApi.Summary, "Where the catalog is thin, and what to charge")
  )
  .annotate(OpenApi.Title, "Guide")
{}
