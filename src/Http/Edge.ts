import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, FiberRef, FiberRefs, HashMap, Option } from "effect"
import { RequestId, requestIdOf } from "../Desk/RequestId.ts"
import { isRateLimited, readsBody } from "../Desk/RequestRules.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { logResponse } from "./AccessLog.ts"
import { guardBody } from "./BodyGuard.ts"
import { ClientConcurrency } from "./ClientConcurrency.ts"
import { clientKey, TrustedProxies } from "./ClientIp.ts"
import { busy, rateLimitHeaders, refusal } from "./RateLimit.ts"

/**
 * What every request passes through before the API: a request id, the per-client concurrency cap, the rate
 * limit, the body checks and one access-log line. One middleware rather than four, with its services looked up
 * once: as four HttpMiddlewares they cost about half the CPU of a preview.
 *
 * It runs on every request, so it is written in as few effect steps as it can be (each costs a few
 * microseconds): the request id, its log annotation and the response headers' handler go onto the request's
 * fiber in one update, the per-client slot is taken and given back without effects of its own, and the slot's
 * release and the access line share one exit handler. Removing the edge altogether took a no-database request
 * from about 2x the empty HttpApi endpoint's CPU to 1.1x.
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
      // Every answer's headers; the rate limit's join them once it has decided, before the API runs.
      let headers: Record<string, string> = { "x-request-id": id }
      const withHeaders = (response: HttpServerResponse.HttpServerResponse) =>
        HttpServerResponse.setHeaders(response, headers)
      const toApi: HttpApp.PreResponseHandler = (_, response) => Effect.succeed(withHeaders(response))
      // The server runs each request on a fiber of its own: the id goes straight into that fiber's context and
      // log annotations, as provideService and annotateLogs would put it, without the restore they pay for
      // that nothing after this request would need.
      const tagged = Effect.updateFiberRefs((fiberId, refs) =>
        FiberRefs.updateAs(refs, {
          fiberId,
          fiberRef: FiberRef.currentContext,
          value: Context.add(FiberRefs.getOrDefault(refs, FiberRef.currentContext), RequestId, id)
        }).pipe(
          FiberRefs.updateAs({
            fiberId,
            fiberRef: FiberRef.currentLogAnnotations,
            value: HashMap.set(FiberRefs.getOrDefault(refs, FiberRef.currentLogAnnotations), "requestId", id)
          }),
          FiberRefs.updateAs({
            fiberId,
            fiberRef: HttpApp.currentPreResponseHandlers,
            value: Option.match(FiberRefs.getOrDefault(refs, HttpApp.currentPreResponseHandlers), {
              onNone: () => Option.some(toApi),
              onSome: (before) =>
                Option.some<HttpApp.PreResponseHandler>((request, response) =>
                  Effect.flatMap(before(request, response), (response) => toApi(request, response))
                )
            })
          })
        )
      )
      // Answers of the body checks do not pass the pre-response handler (the API's have already been sent).
      const answer = readsBody(request.method) ? Effect.map(guardBody(request, app), withHeaders) : app
      // The client's slot, while this request holds one.
      let slot: string | undefined
      const limited = () => {
        if (!isRateLimited(request.method, request.url.split("?")[0]!)) return answer
        const key = clientKey(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], trusted)
        // Refused before the budget is touched: a client at its cap is not charged for knocking.
        if (!concurrency.enter(key)) return Effect.succeed(withHeaders(busy(concurrency.cap)))
        slot = key
        return Effect.flatMap(limiter.consume(key), (decision) => {
          headers = { ...rateLimitHeaders(limiter.policy, decision), "x-request-id": id }
          return decision.allowed ? answer : Effect.succeed(withHeaders(refusal(limiter.policy, decision)))
        })
      }
      return Effect.onExit(Effect.flatMap(tagged, limited), (exit) => {
        if (slot !== undefined) concurrency.leave(slot)
        return logResponse(request, startedAt, exit)
      })
    })
})
