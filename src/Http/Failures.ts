import { HttpApiBuilder, HttpApiError, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { internalFailure } from "../Desk/InternalFailure.ts"
import { RETRY_AFTER_SECONDS, unavailableFor } from "../Desk/Outage.ts"
import {
  InternalError,
  InvalidHandoff,
  InvalidQuery,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  Unavailable
} from "../Domain/Errors.ts"
import { issuesOf, SEE_OPENAPI, SEE_TEMPLATE, summarize } from "../Domain/Issues.ts"
import { type allowedMethods, routedPath } from "./AllowedMethods.ts"
import { errorResponse } from "./Respond.ts"

/**
 * Only query parameters (GET) and JSON bodies (POST) are decoded by the framework here: path ids and
 * X-AGENT-ID are plain strings resolved by the services, so each failure maps to one stable code.
 */
const toResponse = (request: HttpServerRequest.HttpServerRequest, error: HttpApiError.HttpApiDecodeError) => {
  const filing = request.method === "POST" && routedPath(request.url) === "/api/handoffs"
  const { issues, text: message } = summarize(issuesOf(error.issues, filing ? SEE_TEMPLATE : SEE_OPENAPI))
  if (request.method === "GET") {
    return errorResponse(InvalidQuery, new InvalidQuery({ message: `Invalid query parameter: ${message}`, issues }))
  }
  if (filing) {
    return errorResponse(InvalidHandoff, new InvalidHandoff({ message: `Invalid filing: ${message}`, issues }))
  }
  return errorResponse(InvalidRequest, new InvalidRequest({ message: `Invalid request body: ${message}`, issues }))
}

/** Past this many characters a path is cut in the message that names it: the client has the rest. */
const SHOWN_PATH_CHARS = 200
const shown = (path: string) => path.length <= SHOWN_PATH_CHARS ? path : `${path.slice(0, SHOWN_PATH_CHARS)}…`

/** No route for this method and path: a 405 naming the methods the path does answer, else a 404. */
const routeNotFound = (
  request: HttpServerRequest.HttpServerRequest,
  allowedAt: ReturnType<typeof allowedMethods>
) => {
  const path = shown(request.url.split("?")[0]!)
  const allowed = allowedAt(request.url)
  // A path the router could not read (a malformed %-escape such as /api/handoffs/%ZZ) matches no route of its
  // own method either: it names nothing, so 404, not a 405 saying the path answers the method it was sent with.
  return allowed.length > 0 && !allowed.includes(request.method)
    ? errorResponse(
      MethodNotAllowed,
      new MethodNotAllowed({ message: `${path} answers ${allowed.join(", ")}, not ${request.method}.` }),
      { allow: allowed.join(", ") }
    )
    : errorResponse(NotFound, new NotFound({ message: `No route ${request.method} ${path}; see /openapi.json.` }))
}

const retryAfter = { "retry-after": String(RETRY_AFTER_SECONDS) }

const unavailable = (error: Unavailable) => errorResponse(Unavailable, error, retryAfter)

const databaseTrouble = ({ error, reason }: { readonly error: Unavailable; readonly reason: unknown }) =>
  Effect.as(
    Effect.logWarning("database unavailable", reason instanceof Error ? reason.message : String(reason)),
    unavailable(error)
  )

const internalError = (cause: Cause.Cause<unknown>) =>
  Effect.map(internalFailure("unhandled failure", cause), (error) => errorResponse(InternalError, error))

/**
 * Runs inside the API, before its error encoder: a failure that reaches the server's own handler is
 * answered with an empty body before any outer middleware can see it. Typed domain errors pass through
 * to the encoder; decode failures, unknown routes (a 405 with `Allow` where the path answers other methods, else
 * a 404) and defects become JSON here.
 */
export const failuresLive = (allowedAt: ReturnType<typeof allowedMethods>) =>
  HttpApiBuilder.middleware((app) =>
    Effect.catchAllCause(app, (cause) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        // HttpApp.Default claims it cannot fail, yet routing and decoding fail here at run time.
        const trouble = unavailableFor(cause)
        if (Option.isSome(trouble)) return databaseTrouble(trouble.value)
        const failure = Cause.failureOption(cause as Cause.Cause<unknown>)
        if (Option.isNone(failure)) {
          return Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : internalError(cause)
        }
        const error = failure.value
        if (error instanceof Unavailable) return Effect.succeed(unavailable(error))
        if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(toResponse(request, error))
        if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
          return Effect.succeed(routeNotFound(request, allowedAt))
        }
        return Effect.failCause(cause)
      }))
  )
