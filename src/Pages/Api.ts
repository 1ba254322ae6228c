import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { type Context, Schema } from "effect"
import { HandoffPath } from "../Catalog/Api.ts"
import { CatalogResponse } from "../Catalog/Responses.ts"
import { NotFound } from "../Domain/Errors.ts"
import { Preview } from "../Domain/Preview.ts"

/** Lenient on purpose: a person's search box never earns a 422; odd values fall back to defaults. */
export const CatalogPageParams = Schema.Struct({
  q: Schema.optional(Schema.String.annotations({ description: "Search text; longer than 200 characters is cut" })),
  tag: Schema.optional(Schema.String.annotations({ description: "Only handoffs with this tag" })),
  page: Schema.optional(Schema.String.annotations({ description: "1-based page; anything else means 1" }))
})

/** The JSON schema is the typed success; the same status also serves HTML to browsers. */
const alsoHtml = (statuses: ReadonlyArray<string>): Context.Tag.Service<OpenApi.Transform> => (operation) => {
  for (const status of statuses) {
    operation.responses[status].content["text/html; charset=utf-8"] = { schema: { type: "string" } }
  }
  return operation
}

const NEGOTIATED = "HTML for browsers; JSON when the Accept header prefers application/json."

export class PagesApi extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("home", "/")
      .setUrlParams(CatalogPageParams)
      .addSuccess(CatalogResponse)
      .annotate(OpenApi.Summary, "Catalog page for people, with search")
      .annotate(OpenApi.Description, `${NEGOTIATED} Agents search with GET /api/discover.`)
      .annotate(OpenApi.Transform, alsoHtml(["200"]))
  )
  .add(
    HttpApiEndpoint.get("handoff", "/h/:id")
      .setPath(HandoffPath)
      .addSuccess(Preview)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Preview page of one handoff for people (never the body)")
      .annotate(OpenApi.Description, `${NEGOTIATED} The JSON is the same preview as GET /api/handoffs/:id.`)
      .annotate(OpenApi.Transform, alsoHtml(["200", "404"]))
  )
  .annotate(OpenApi.Title, "Pages")
{}
