import { HttpApp, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect } from "effect"
import { randomUUID } from "node:crypto"

export class RequestId extends Context.Tag("RequestId")<RequestId, string>() {}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Keeps a caller's well-formed X-Request-Id (for tracing through proxies), otherwise makes one. */
export const requestId = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const incoming = request.headers["x-request-id"]
    const id = incoming !== undefined && SAFE_ID.test(incoming) ? incoming : randomUUID()
    // Set before sending: at this level the response returned by the app has already been written.
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", id))
    )
    return yield* app.pipe(Effect.provideService(RequestId, id), Effect.annotateLogs("requestId", id))
  }))
