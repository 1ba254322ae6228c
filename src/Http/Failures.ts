import { HttpApiBuilder, HttpApiError, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import {
  InternalError,
  type Issue,
  InvalidHandoff,
  InvalidQuery,
  InvalidRequest,
  NotFound,
  Unavailable
} from "../Domain/Errors.ts"
import { databaseOutage, RETRY_AFTER_SECONDS } from "./Outage.ts"
import { RequestId } from "./RequestId.ts"
import { errorResponse } from "./Respond.ts"

const MAX_ISSUES = 20

const DESK_OWNED = new Set(["id", "hash", "purchases", "origin", "isSeeded", "filedAt", "useful", "notUseful", "bodyChars"])

export const isOptionalNoise = (issue: HttpApiError.HttpApiDecodeError["issues"][number]) =>
  issue._tag === "Type" && issue.message.startsWith("Expected undefined")

export const issueOf = (issue: HttpApiError.HttpApiDecodeError["issues"][number]): Issue => {
  const path = issue.path.map(String).join(".")
  switch (issue._tag) {
    case "Unexpected":
      return {
        path,
        message: DESK_OWNED.has(path)
          ? `unknown field: the desk sets "${path}" itself; leave it out`
          : `unknown field "${path}"; see GET /api/template for the accepted fields`
      }
    case "Missing":
      return { path, message: "is required" }
    default:
      return { path, message: issue.message }
  }
}

export const describe = (issues: ReadonlyArray<Issue>) => issues.map((_) => (_.path === "" ? _.message : `${_.path}: ${_.message}`)).join("; ")

/**
 * Only query parameters (GET) and JSON bodies (POST) are decoded by the framework here: path ids and
 * X-AGENT-ID are plain strings resolved by the services, so each failure maps to one stable code.
 */
const toResponse = (request: HttpServerRequest.HttpServerRequest, error: HttpApiError.HttpApiDecodeError) => {
  const all = error.issues.filter((_) => !isOptionalNoise(_)).map(issueOf)
  // A 1 MiB body can hold 100,000 wrong items: answer with the first few, not a ten-fold larger list.
  const issues = all.slice(0, MAX_ISSUES)
  const message = describe(issues) + (all.length > MAX_ISSUES ? `; and ${all.length - MAX_ISSUES} more` : "")
  if (request.method === "GET") {
    return errorResponse(InvalidQuery, new InvalidQuery({ message: `Invalid query parameter: ${message}`, issues }))
  }
  if (request.url.split("?")[0] === "/api/handoffs") {
    return errorResponse(InvalidHandoff, new InvalidHandoff({ message: `Invalid filing: ${message}`, issues }))
  }
  return errorResponse(InvalidRequest, new InvalidRequest({ message: `Invalid request body: ${message}`, issues }))
}

const routeNotFound = (request: HttpServerRequest.HttpServerRequest) =>
  errorResponse(
    NotFound,
    new NotFound({ message: `No route ${request.method} ${request.url.split("?")[0]}; see /openapi.json.` })
  )

const retryAfter = { "retry-after": String(RETRY_AFTER_SECONDS) }

const unavailable = (error: Unavailable) => errorResponse(Unavailable, error, retryAfter)

const databaseDown = (error: unknown) =>
  Effect.as(
    Effect.logWarning("database unavailable", error instanceof Error ? error.message : String(error)),
    unavailable(
      new Unavailable({ message: `The database does not answer; retry in ${RETRY_AFTER_SECONDS} seconds.` })
    )
  )

const internalError = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const requestId = Option.getOrElse(yield* Effect.serviceOption(RequestId), () => "unknown")
    yield* Effect.logError("unhandled failure", Cause.pretty(cause))
    return errorResponse(
      InternalError,
      new InternalError({ message: "Something failed on the desk; retry, or report the requestId.", requestId })
    )
  })

/**
 * Runs inside the API, before its error encoder: a failure that reaches the server's own handler is
 * answered with an empty body before any outer middleware can see it. Typed domain errors pass through
 * to the encoder; decode failures, unknown routes and defects become JSON here.
 */
export const FailuresLive = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // HttpApp.Default claims it cannot fail, yet routing and decoding fail here at run time.
      const outage = databaseOutage(cause)
      if (Option.isSome(outage)) return databaseDown(outage.value)
      const failure = Cause.failureOption(cause as Cause.Cause<unknown>)
      if (Option.isNone(failure)) return Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : internalError(cause)
      const error = failure.value
      if (error instanceof Unavailable) return Effect.succeed(unavailable(error))
      if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(toResponse(request, error))
      if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
        return Effect.succeed(routeNotFound(request))
      }
      return Effect.failCause(cause)
    })))
