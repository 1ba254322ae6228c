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

const patternsOf = (routes: ReadonlyArray<Route>) =>
  routes.map(({ method, path }) => ({ method, segments: segmentsOf(path) }))

const matches = (pattern: ReadonlyArray<string>, segments: ReadonlyArray<string>) =>
  pattern.length === segments.length &&
  pattern.every((segment, i) => segment.startsWith(":") || segment === segments[i])

/**
 * The methods `routes` answer at a path (with HEAD wherever GET is: the server answers it), for a 405's `Allow`
 * when a request's method is not among them; none where no route has the path.
 */
export const allowedMethods = (routes: ReadonlyArray<Route>) => {
  const patterns = patternsOf(routes)
  return (path: string): ReadonlyArray<string> => {
    const segments = segmentsOf(path)
    const methods = new Set<string>()
    for (const route of patterns) if (matches(route.segments, segments)) methods.add(route.method)
    if (methods.has("GET")) methods.add("HEAD")
    return [...methods].sort()
  }
}

/** Whether a path segment's %-escapes spell UTF-8: the router matches no route with one that does not. */
const readable = (segment: string) => {
  try {
    decodeURIComponent(segment)
    return true
  } catch {
    return false
  }
}

/** The route of `routes` that takes a request (its method and URL), as the router would take it; none if none. */
export const routeFinder = <R extends Route>(routes: ReadonlyArray<R>) => {
  const patterns = routes.map((route) => ({ route, segments: segmentsOf(route.path) }))
  return (method: string, url: string): R | undefined => {
    const segments = segmentsOf(url)
    const found = patterns.find((pattern) => pattern.route.method === method && matches(pattern.segments, segments))
    return found !== undefined && segments.every(readable) ? found.route : undefined
  }
}

/** Whether a request (its method and URL) is one of `routes`, as the router would take it. */
export const routeTest = (routes: ReadonlyArray<Route>) => {
  const find = routeFinder(routes)
  return (method: string, url: string): boolean => find(method, url) !== undefined
}
export type RouteTest = ReturnType<typeof routeTest>
