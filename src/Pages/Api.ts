import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { type Context, Option, Schema, SchemaAST } from "effect"
import { HandoffPath } from "../Catalog/Api.ts"
import { CatalogResponse } from "../Catalog/Responses.ts"
import { DiscoverParams } from "../Domain/Discover.ts"
import { InvalidQuery, NotFound, Unavailable } from "../Domain/Errors.ts"
import { Preview } from "../Domain/Preview.ts"
import { OwnerView } from "../Owner/Responses.ts"

/** A parameter as sent, described as GET /api/discover describes it (the page judges it by the same rules). */
const pageParam = (optional: SchemaAST.AST) => {
  // An optional field's type is its schema or undefined.
  const ast = SchemaAST.isUnion(optional)
    ? optional.types.find((_) => !SchemaAST.isUndefinedKeyword(_)) ?? optional
    : optional
  const descriptionOf = (node: SchemaAST.AST): Option.Option<string> =>
    SchemaAST.getJSONSchemaAnnotation(node).pipe(
      Option.flatMap((_) => Option.fromNullable((_ as { readonly description?: string }).description)),
      Option.orElse(() => SchemaAST.getDescriptionAnnotation(node)),
      // A transformed or refined value is described where it starts (a tag's label cleaning).
      Option.orElse(() =>
        SchemaAST.isTransformation(node) || SchemaAST.isRefinement(node) ? descriptionOf(node.from) : Option.none()
      )
    )
  const described = descriptionOf(ast)
  const sent = Schema.Union(Schema.String, Schema.Array(Schema.String))
  return Schema.optional(
    Option.match(described, { onNone: () => sent, onSome: (description) => sent.annotations({ description }) })
  )
}

/**
 * The parameters of GET /api/discover, carried as sent: the page decodes them with DiscoverParams itself, so a
 * bad value is a 422 page a person can read (or the JSON 422 of REST) rather than the framework's JSON answer.
 */
export const CatalogPageParams = Schema.Struct(
  Object.fromEntries(
    SchemaAST.getPropertySignatures(DiscoverParams.from.ast).map(({ name, type }) => [name, pageParam(type)])
  ) as {
    readonly [K in keyof typeof DiscoverParams.from.fields]: ReturnType<typeof pageParam>
  }
)

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
      .addError(InvalidQuery)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "Catalog page for people, with search, filters and pages")
      .annotate(
        OpenApi.Description,
        `${NEGOTIATED} Takes the parameters of GET /api/discover, under the same rules; an invalid one is a 422 ` +
          "(an HTML page for browsers). Agents search with GET /api/discover."
      )
      .annotate(OpenApi.Transform, alsoHtml(["200", "422"]))
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
  .add(
    HttpApiEndpoint.get("agent", "/agents/:id")
      .setPath(
        Schema.Struct({ id: Schema.String.annotations({ description: "Agent id: did:desk: + 32 lowercase hex" }) })
      )
      .addSuccess(OwnerView)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "An agent's page for its owner: filings and sales, earnings, purchases, spend and cap")
      .annotate(
        OpenApi.Description,
        `${NEGOTIATED} Anyone who knows the id can read it, as anyone who knows it can use it. An unknown or ` +
          "malformed id is a 404."
      )
      .annotate(OpenApi.Transform, alsoHtml(["200", "404"]))
  )
  .annotate(OpenApi.Title, "Pages")
{}
