/** A route as the API defines it: a method and a path whose `:name` segments match any one segment. */
export interface Route {
  readonly method: string
  readonly path: string
}

/** A path's segments as the router compares them: case, doubled and trailing slashes, and `;...` ignored. */
const segmentsOf = (path: string) =>
  path.split("?")[0]!.split(";")[0]!.toLowerCase().split("/").filter((segment) => segment !== "")

/** A request's path as the router took it: `//API/handoffs/;x` is `/api/handoffs`. */
export const routedPath = (url: string) => `/${segmentsOf(url).join("/")}`

/**
 * The methods `routes` answer at a path (with HEAD wherever GET is: the server answers it), for a 405's `Allow`
 * when a request's method is not among them; none where no route has the path.
 */
export const allowedMethods = (routes: ReadonlyArray<Route>) => {
  const patterns = routes.map(({ method, path }) => ({ method, segments: segmentsOf(path) }))
  return (path: string): ReadonlyArray<string> => {
    const segments = segmentsOf(path)
    const methods = new Set<string>()
    for (const route of patterns) {
      const matches = route.segments.length === segments.length &&
        route.segments.every((segment, i) => segment.startsWith(":") || segment === segments[i])
      if (matches) methods.add(route.method)
    }
    if (methods.has("GET")) methods.add("HEAD")
    return [...methods].sort()
  }
}
