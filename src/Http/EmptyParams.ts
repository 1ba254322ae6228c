import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"

/** A query parameter with nothing in it: `q=` or a bare `q`, as a form's empty field or the discover echo sends it. */
const EMPTY_PARAM = /[?&][^=&]*=?(?=&|$)/

/** `url` without its empty query parameters; `url` itself when it has none. */
export const withoutEmptyParams = (url: string): string => {
  const start = url.indexOf("?")
  if (start < 0 || !EMPTY_PARAM.test(url)) return url
  const kept = url.slice(start + 1).split("&").filter((part) => {
    const equals = part.indexOf("=")
    return equals > 0 && equals < part.length - 1
  })
  return kept.length === 0 ? url.slice(0, start) : `${url.slice(0, start)}?${kept.join("&")}`
}

/**
 * An empty query parameter is one not sent: the discover echo names unset text values `""`, and a form sends
 * its empty fields, so sending either back searches as if they were left out rather than failing on `q: must
 * not be empty`. The app sees the request with such parameters removed. For reads only: a request with a body
 * reads no query parameters, and the body guard hands the app a request of its own (src/Http/Edge.ts).
 */
export const emptyParamsLeftOut = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const url = withoutEmptyParams(request.url)
  return url === request.url
    ? app
    : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url }))
}
