import { HttpServerError, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect, type Exit, FiberRef, List, LogSpan } from "effect"

const DESK_ID = /did:desk:([0-9a-f]{4})[0-9a-f]*([0-9a-f]{4})/gi
const ESCAPES = /(?:%[0-9a-f]{2})+/gi
const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Percent-escapes decoded where they spell UTF-8; malformed runs stay as they are instead of failing. */
const decodeEscapes = (text: string) =>
  text.replace(ESCAPES, (run) => {
    try {
      return utf8.decode(Buffer.from(run.replace(/%/g, ""), "hex"))
    } catch {
      return run
    }
  })

/**
 * An agent id is a bearer identity (knowing one is using it), and buyers' ids are masked in public listings:
 * URLs such as `/api/receipts?payer=<id>` reach the log with the id cut to its ends. The router and the query
 * decoder accept an id in any percent-encoding, so the mask applies to the decoded text (decoded until nothing
 * changes, for ids encoded twice); the log shows that decoded form.
 */
export const redactUrl = (url: string): string => {
  let decoded = url
  for (let round = 0; round < 4; round++) {
    const next = decodeEscapes(decoded)
    if (next === decoded) break
    decoded = next
  }
  return decoded.replace(DESK_ID, "did:desk:$1…$2")
}

/**
 * One line per request, like HttpMiddleware.logger, with the URL redacted; bodies and headers are never logged.
 * `startedAt` (epoch ms) makes the line's `http` span.
 */
export const logResponse = (
  request: HttpServerRequest.HttpServerRequest,
  startedAt: number,
  exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>
) => {
  const status = exit._tag === "Success"
    ? exit.value.status
    : HttpServerError.causeResponseStripped(exit.cause)[0].status
  return Effect.log("Sent HTTP response").pipe(
    Effect.annotateLogs({ "http.method": request.method, "http.url": redactUrl(request.url), "http.status": status }),
    Effect.locallyWith(FiberRef.currentLogSpan, List.prepend(LogSpan.make("http", startedAt)))
  )
}
