import { HttpServerError, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect, type Exit, FiberRef, List, LogSpan } from "effect"

const DESK_ID_IN_URL = /did(?::|%3a)desk(?::|%3a)([0-9a-f]{4})[0-9a-f]*([0-9a-f]{4})/gi

/**
 * An agent id is a bearer identity (knowing one is using it), and buyers' ids are masked in public
 * listings: URLs such as `/api/receipts?payer=<id>` reach the log with the id cut to its ends.
 */
export const redactUrl = (url: string): string => url.replace(DESK_ID_IN_URL, "did:desk:$1…$2")

/**
 * One line per request, like HttpMiddleware.logger, with the URL redacted; bodies and headers are never logged.
 * `startedAt` (epoch ms) makes the line's `http` span.
 */
export const logResponse = (
  request: HttpServerRequest.HttpServerRequest,
  startedAt: number,
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
) => {
  const status = exit._tag === "Success" ? exit.value.status : HttpServerError.causeResponseStripped(exit.cause)[0].status
  return Effect.log("Sent HTTP response").pipe(
    Effect.annotateLogs({ "http.method": request.method, "http.url": redactUrl(request.url), "http.status": status }),
    Effect.locallyWith(FiberRef.currentLogSpan, List.prepend(LogSpan.make("http", startedAt)))
  )
}
