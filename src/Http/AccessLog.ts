import type { HttpServerRequest } from "@effect/platform"
import {
  Cause,
  Context,
  type Fiber,
  FiberId,
  FiberRef,
  HashMap,
  List,
  type Logger,
  LogLevel,
  LogSpan,
  Option
} from "effect"
import type { ServerResponse } from "node:http"
import { decodeEscapes } from "./PercentEscapes.ts"

const DESK_ID = /did:desk:([0-9a-f]{4})[0-9a-f]*([0-9a-f]{4})/gi
/** An id's 32 hex digits on their own (`?q=<hex>`): the part of an id that is its secret. */
const BARE_ID = /(?<![0-9a-f])([0-9a-f]{4})[0-9a-f]{24}([0-9a-f]{4})(?![0-9a-f])/gi
const MAY_NEED_REDACTING = /%|did:desk:|[0-9a-f]{32}/i

/**
 * An agent id is a bearer identity (knowing one is using it), and buyers' ids are masked in public listings:
 * URLs such as `/api/receipts?payer=<id>` reach the log with the id cut to its ends, and so do its 32 hex digits
 * alone (a search for them). The router and the query
 * decoder accept an id in any percent-encoding, so the mask applies to the decoded text (decoded until nothing
 * changes, for ids encoded twice); the log shows that decoded form.
 */
export const redactUrl = (url: string): string => {
  // Most URLs have neither an escape nor an id: nothing to decode or mask.
  if (!MAY_NEED_REDACTING.test(url)) return url
  let decoded = url
  for (let round = 0; round < 4; round++) {
    const next = decodeEscapes(decoded)
    if (next === decoded) break
    decoded = next
  }
  return decoded.replace(DESK_ID, "did:desk:$1…$2").replace(BARE_ID, "$1…$2")
}

/** Where the desk's access lines go as JSON text, one per response (src/JsonLogger.ts gives its stdout buffer). */
export class AccessLines extends Context.Tag("AccessLines")<AccessLines, (line: string) => void>() {}

/** The status logged for a response whose client left before it was finished, as the platform logs one. */
const CLIENT_GONE = 499

const MESSAGE = "Sent HTTP response"
const LINE_START = `{"message":${JSON.stringify(MESSAGE)},"logLevel":${
  JSON.stringify(LogLevel.Info.label)
},"timestamp":"`

/**
 * The access line as Logger.json writes an entry, key for key: `JSON.stringify` of the same entry gives the same
 * text (test/logging/AccessLog.test.ts). Written out rather than built as four objects and stringified: 2.1 µs a
 * line in a loop against 2.9, the date and the fiber's name included. The line is a visible part of a cheap request:
 * a build that skipped it spent about 10 µs less of a `/llms.txt` request's CPU (`npm run bench:compare`, cheaper
 * in four rounds of four, on a host where the request cost 145 µs).
 */
export const accessLine = (
  requestId: string,
  method: string,
  url: string,
  status: number,
  date: Date,
  httpMs: number,
  fiberId: string
): string =>
  `${LINE_START}${date.toISOString()}","annotations":{"requestId":${JSON.stringify(requestId)},"http.method":${
    JSON.stringify(method)
  },"http.url":${JSON.stringify(url)},"http.status":${status}},"spans":{"http":${httpMs}},"fiberId":${
    JSON.stringify(fiberId)
  }}`

/**
 * `FiberId.threadName`, the name Logger.json gives a fiber, without its detour for the one kind of id a request's
 * fiber has: it collects the ids into a HashSet (hashing each) and joins them, 0.5-0.85 µs a call in a loop on a
 * host where this takes under 0.01.
 */
export const fiberName = (fiberId: FiberId.FiberId): string =>
  fiberId._tag === "Runtime" ? `#${fiberId.id}` : FiberId.threadName(fiberId)

/**
 * One line per response, like HttpMiddleware.logger, with the URL redacted; bodies and headers are never logged.
 * It is written when Node is done with the response (sent, or its client gone: 499) with the time since the
 * request reached the edge as its `http` span, in Logger.json's form: to `lines` when the program has them, else
 * handed to the fiber's loggers as `Effect.log` would. Nothing of it runs on the request's fiber: as an effect
 * step with its log entry, the line cost about a fifth of a `/llms.txt` request's CPU (with the entry's
 * formatting, 423 -> 345 us on a 2 GHz core).
 */
export const logWhenDone = (
  lines: Option.Option<(line: string) => void>,
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  request: HttpServerRequest.HttpServerRequest,
  response: ServerResponse,
  requestId: string
): void => {
  if (LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)) return
  const startedAt = Date.now()
  // What the line needs of the fiber is taken now: the listener keeps nothing of the request's fiber alive.
  const fiberId = fiber.id()
  const loggers = Option.isNone(lines) ? fiber.getFiberRef(FiberRef.currentLoggers) : undefined
  const context = loggers === undefined ? undefined : fiber.getFiberRefs()
  const method = request.method
  const url = request.url
  response.once("close", () => {
    const status = response.writableFinished ? response.statusCode : CLIENT_GONE
    const logged = redactUrl(url)
    const date = new Date()
    if (Option.isSome(lines)) {
      const httpMs = date.getTime() - startedAt
      return lines.value(accessLine(requestId, method, logged, status, date, httpMs, fiberName(fiberId)))
    }
    const annotations = { requestId, "http.method": method, "http.url": logged, "http.status": status }
    const entry: Logger.Logger.Options<unknown> = {
      fiberId,
      logLevel: LogLevel.Info,
      message: MESSAGE,
      cause: Cause.empty,
      context: context!,
      spans: List.make(LogSpan.make("http", startedAt)),
      annotations: HashMap.fromIterable<string, unknown>(Object.entries(annotations)),
      date
    }
    for (const logger of loggers!) logger.log(entry)
  })
}
