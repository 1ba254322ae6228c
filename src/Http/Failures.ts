import { HttpApiBuilder, HttpApiError, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { internalFailure } from "../Desk/InternalFailure.ts"
import { RETRY_AFTER_SECONDS, unavailableFor } from "../Desk/Outage.ts"
import { type PayoutRail, withPayoutIssues } from "../Domain/Agent.ts"
import {
  InternalError,
  InvalidHandoff,
  InvalidQuery,
  InvalidRequest,
  type Issue,
  MethodNotAllowed,
  NotFound,
  Unavailable
} from "../Domain/Errors.ts"
import { withIdentityIssues } from "../Domain/FilingRules.ts"
import { issuesOf, SEE_OPENAPI, SEE_TEMPLATE, summarize } from "../Domain/Issues.ts"
import { AGENT_HEADER } from "../Identity/AgentId.ts"
import { RailProfile } from "../Settlement.ts"
import { type allowedMethods, routedPath } from "./AllowedMethods.ts"
import { lossyMarked, lossyProblem } from "./LossyNumbers.ts"
import { errorResponse } from "./Respond.ts"

/**
 * A request the framework could not decode: its query parameters (GET, 422 `invalid_query`) or its JSON body (POST:
 * a filing's 422 `invalid_handoff`, any other `invalid_request`). X-AGENT-ID was judged before either. A body that
 * names a payout address (a filing, POST /api/agents) also hears of the payout address rule, and a filing of the
 * other rule its schema cannot judge (`filerDid` against the header, first), so that one 422 lists every problem of
 * the request.
 */
const toResponse =
  (rail: PayoutRail) => (request: HttpServerRequest.HttpServerRequest, error: HttpApiError.HttpApiDecodeError) => {
    const route = request.method === "POST" ? routedPath(request.url) : undefined
    const filing = route === "/api/handoffs"
    if (route === undefined) {
      return Effect.succeed(respond(request, false, summarize(issuesOf(error.issues, SEE_OPENAPI))))
    }
    // The body guard read the body, so its text is at hand.
    return Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => {
      const body = parsedOrNot(text)
      const decoded = withLossyWords(issuesOf(error.issues, filing ? SEE_TEMPLATE : SEE_OPENAPI), body)
      if (!filing && route !== "/api/agents") return respond(request, false, summarize(decoded))
      const withPayout = withPayoutIssues(decoded, body, rail)
      const all = filing ? withIdentityIssues(withPayout, body, request.headers[AGENT_HEADER] ?? "") : withPayout
      return respond(request, filing, summarize(all))
    })
  }

/**
 * A number the body guard marked where it was sent (src/Http/LossyNumbers.ts: no JSON number holds it exactly) is
 * named for that, not for the marker its field refused.
 */
const withLossyWords = (issues: ReadonlyArray<Issue>, body: unknown): ReadonlyArray<Issue> =>
  issues.map((issue) => {
    const literal = lossyMarked(body, issue.path)
    // A field the route does not take is named as such, whatever it holds.
    return literal === undefined || issue.message.startsWith("unknown field")
      ? issue
      : { path: issue.path, message: lossyProblem(literal) }
  })

const parsedOrNot = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const respond = (
  request: HttpServerRequest.HttpServerRequest,
  filing: boolean,
  { issues, text: message }: { readonly issues: ReadonlyArray<Issue>; readonly text: string }
) => {
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
  HttpApiBuilder.middleware(
    Effect.map(RailProfile, (rail) => (app) =>
      Effect.catchAllCause(app, (cause) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          // HttpApp.Default claims it cannot fail, yet routing and decoding fail here at run time.
          const trouble = unavailableFor(cause)
          if (Option.isSome(trouble)) {
            return databaseTrouble(trouble.value)
          }
          const failure = Cause.failureOption(cause as Cause.Cause<unknown>)
          if (Option.isNone(failure)) {
            return Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : internalError(cause)
          }
          const error = failure.value
          if (error instanceof Unavailable) {
            return Effect.succeed(unavailable(error))
          }
          if (error instanceof HttpApiError.HttpApiDecodeError) {
            return toResponse(rail)(request, error)
          }
          if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
            return Effect.succeed(routeNotFound(request, allowedAt))
          }
          return Effect.failCause(cause)
        })))
  )
