import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Context, FiberRef, FiberRefs, HashMap, Logger, Option } from "effect"
import { randomUUID } from "node:crypto"
import { IncomingMessage } from "node:http"

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The answer header that carries a request's id (src/Http/Edge.ts sets it before the API answers). */
export const REQUEST_ID_HEADER = "x-request-id"

/**
 * An agent id (a bearer identity) is never written to the log: a request id holding one, or its 32 hex digits alone,
 * is not kept.
 */
const HOLDS_AGENT_ID = /did:desk:|(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])/i

/** Keeps a caller's well-formed X-Request-Id (for tracing through proxies), otherwise makes one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && SAFE_ID.test(incoming) && !HOLDS_AGENT_ID.test(incoming) ? incoming : randomUUID()

/**
 * The id of the request that `context` serves, as its answer carries it; none outside a request (a background
 * fiber) or before the edge named it. Read from Node's response where it is already kept, rather than written
 * into the request fiber's log annotations on every request: that update copied the fiber's FiberRefs and left
 * one more entry for each of the ten or so copies Effect's HTTP stack makes of them a request, about 5 KB of the
 * 105 KB a `/llms.txt` request allocated (V8's sampling heap profiler, 20,000 requests).
 */
export const requestIdIn = (context: Context.Context<never>): string | undefined => {
  const request = Context.getOption(context, HttpServerRequest.HttpServerRequest)
  if (Option.isNone(request) || !(request.value.source instanceof IncomingMessage)) return undefined
  const id = NodeHttpServerRequest.toServerResponse(request.value).getHeader(REQUEST_ID_HEADER)
  return typeof id === "string" ? id : undefined
}

/**
 * `logger` with `requestId` among the annotations of each line logged while a request is worked on (by its fiber
 * or one forked from it, which inherits the request), as Effect.annotateLogs would put it there.
 */
export const withRequestIds = <Message, Output>(
  logger: Logger.Logger<Message, Output>
): Logger.Logger<Message, Output> =>
  Logger.make((options) => {
    const id = requestIdIn(FiberRefs.getOrDefault(options.context, FiberRef.currentContext))
    return logger.log(
      id === undefined || HashMap.has(options.annotations, "requestId")
        ? options
        : { ...options, annotations: HashMap.set(options.annotations, "requestId", id) }
    )
  })
