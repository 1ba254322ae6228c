import { HttpApi } from "@effect/platform"

/** "METHOD /path" of every endpoint, read from the one API definition so the list cannot drift. */
export const routesOf = (api: HttpApi.HttpApi.Any): ReadonlyArray<string> => {
  const routes: Array<string> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => routes.push(`${endpoint.method} ${endpoint.path}`)
  })
  return routes
}
