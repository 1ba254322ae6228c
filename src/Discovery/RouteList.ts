import { HttpApi, HttpApiSchema, OpenApi } from "@effect/platform"
import { Context, Option, SchemaAST } from "effect"
import { AGENT_HEADER } from "../Identity/AgentId.ts"

export interface RouteInfo {
  readonly method: string
  readonly path: string
  readonly summary: string
  readonly group: string
  readonly contentType: string
  /** Whether the route needs `X-AGENT-ID` (401 without it), takes it, or ignores it, as its headers declare. */
  readonly agentHeader: "required" | "optional" | "none"
  /** The query parameters it reads; it ignores any other. */
  readonly queryParams: ReadonlySet<string>
}

const agentHeaderOf = (headers: Option.Option<{ readonly ast: SchemaAST.AST }>): RouteInfo["agentHeader"] => {
  if (Option.isNone(headers)) return "none"
  const declared = SchemaAST.getPropertySignatures(headers.value.ast).find((_) => _.name === AGENT_HEADER)
  return declared === undefined ? "none" : declared.isOptional ? "optional" : "required"
}

/** Every endpoint of the API with its summary and success content type, in definition order. */
export const routeList = (api: HttpApi.HttpApi.Any): ReadonlyArray<RouteInfo> => {
  const routes: Array<RouteInfo> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, successes }) => {
      const success = [...successes.values()][0]?.ast ?? Option.none()
      routes.push({
        method: endpoint.method,
        path: endpoint.path,
        summary: Context.getOrElse(endpoint.annotations, OpenApi.Summary, () => ""),
        group: group.identifier,
        contentType: Option.match(success, {
          onNone: () => "application/json",
          onSome: (ast) => HttpApiSchema.getEncoding(ast).contentType
        }),
        agentHeader: agentHeaderOf(endpoint.headersSchema),
        queryParams: new Set(Option.match(endpoint.urlParamsSchema, {
          onNone: () => [],
          onSome: (schema) => SchemaAST.getPropertySignatures(schema.ast).map((_) => String(_.name))
        }))
      })
    }
  })
  return routes
}
