import { HttpApi, HttpApiSchema, OpenApi } from "@effect/platform"
import { Context, Option } from "effect"

export interface RouteInfo {
  readonly method: string
  readonly path: string
  readonly summary: string
  readonly group: string
  readonly contentType: string
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
        })
      })
    }
  })
  return routes
}
