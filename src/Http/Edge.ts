import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, FiberRef, HashMap, Option } from "effect"
import { RequestId, requestIdOf } from "../Desk/RequestId.ts"
import { isRateLimited, readsBody } from "../Desk/RequestRules.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { logResponse } from "./AccessLog.ts"
import { guardBody } from "./BodyGuard.ts"
import { ClientConcurrency } from "./ClientConcurrency.ts"
import { clientIp, rateKeyOf, TrustedProxies } from "./ClientIp.ts"
import { busy, rateLimitHeaders, refusal } from "./RateLimit.ts"

/**
 * What every request passes through before the API: a request id, the per-client concurrency cap, the rate
 * limit, the body checks and one access-log line. One middleware rather than four, with its services looked up once and the response
 * headers set in one pre-response handler: as four HttpMiddlewares they cost about half the CPU of a preview
 * (removing them all: 1.24 -> 0.58 ms per request in `npm run bench`); this way, 1.22-1.30 -> 0.98-1.30 ms.
 *
 * The response the API returns has already been sent when this sees it, so headers go on through a
 * pre-response handler (which also reaches error responses); answers made here (429, body errors) get
 * them directly.
 */
export const makeEdge = Effect.gen(function*() {
  const limiter = yield* RateLimiter
  const trusted = yield* TrustedProxies
  const concurrency = yield* ClientConcurrency

  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.withFiberRuntime((fiber) => {
      const startedAt = Date.now()
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      const id = requestIdOf(request.headers["x-request-id"])
      const answer = (headers: Record<string, string>) =>
        Effect.zipRight(
          HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(HttpServerResponse.setHeaders(response, headers))
          ),
          readsBody(request.method)
            // Answers of the body checks do not pass the pre-response handler (the API's have already been sent).
            ? Effect.map(guardBody(request, app), (response) => HttpServerResponse.setHeaders(response, headers))
            : app
        )
      const key = () =>
        rateKeyOf(clientIp(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], trusted))
      const limit = (key: string) =>
        concurrency.run(
          key,
          Effect.flatMap(limiter.consume(key), (decision) => {
            const headers = { ...rateLimitHeaders(limiter.policy, decision), "x-request-id": id }
            return decision.allowed
              ? answer(headers)
              : Effect.succeed(HttpServerResponse.setHeaders(refusal(limiter.policy, decision), headers))
          }),
          // Refused before the budget is touched: a client at its cap is not charged for knocking. Built only then:
          // encoding this answer on every request cost about a tenth of a no-database request's CPU.
          Effect.sync(() => HttpServerResponse.setHeaders(busy(concurrency.cap), { "x-request-id": id }))
        )
      const limited = isRateLimited(request.method, request.url.split("?")[0]!)
        ? limit(key())
        : answer({ "x-request-id": id })
      // The server runs each request on a fiber of its own: the id goes straight into that fiber's context and
      // log annotations, as provideService and annotateLogs would put it, without the restore they pay for
      // (about 10 us of CPU per request) that nothing after this request would need.
      const tagged = Effect.zipRight(
        FiberRef.update(FiberRef.currentContext, Context.add(RequestId, id)),
        FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("requestId", id))
      )
      return Effect.zipRight(tagged, Effect.onExit(limited, (exit) => logResponse(request, startedAt, exit)))
    })
})
