import { HttpApp, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { RateLimited } from "../Domain/Errors.ts"
import { type RateDecision, type RatePolicy, RateLimiter } from "../RateLimiter.ts"
import { clientIp, TrustedProxies } from "./ClientIp.ts"
import { errorResponse } from "./Respond.ts"

const discoveryDocuments = new Set([
  "/llms.txt",
  "/AGENTS.md",
  "/agents.txt",
  "/agents.json",
  "/tools.json",
  "/index.json",
  "/starter.md",
  "/openapi.json"
])

/**
 * Everything is limited except reads of `GET /api/health`, the discovery documents and `/.well-known/*`.
 * Paths are compared raw and exactly: a spelling the router might normalise differently is limited.
 */
export const isRateLimited = (method: string, path: string): boolean => {
  if (method !== "GET" && method !== "HEAD") return true
  return !(path === "/api/health" || discoveryDocuments.has(path) || path.startsWith("/.well-known/"))
}

/**
 * draft-ietf-httpapi-ratelimit-headers, structured-field form. A sliding window has no fixed reset, so `t` is
 * when the full quota is back (every request now in the window has left it); Retry-After is when one slot is.
 */
export const rateLimitHeaders = (policy: RatePolicy, decision: RateDecision) => ({
  "ratelimit-policy": `"default";q=${policy.limit};w=${policy.windowSeconds}`,
  "ratelimit": `"default";r=${decision.remaining};t=${decision.resetSeconds}`
})

const refusal = (policy: RatePolicy, decision: RateDecision) =>
  errorResponse(
    RateLimited,
    new RateLimited({
      message: `This address has used its ${policy.limit} requests per ${policy.windowSeconds} seconds; ` +
        `retry in ${decision.retryAfterSeconds} second${decision.retryAfterSeconds === 1 ? "" : "s"}.`
    }),
    { ...rateLimitHeaders(policy, decision), "retry-after": String(decision.retryAfterSeconds) }
  )

export const rateLimit = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!isRateLimited(request.method, request.url.split("?")[0]!)) return yield* app
    const limiter = yield* RateLimiter
    const ip = clientIp(
      Option.getOrUndefined(request.remoteAddress),
      request.headers["x-forwarded-for"],
      yield* TrustedProxies
    )
    const decision = yield* limiter.consume(ip)
    if (!decision.allowed) return refusal(limiter.policy, decision)
    const headers = rateLimitHeaders(limiter.policy, decision)
    // A pre-response handler also reaches error responses, and works when this wraps the whole server,
    // where the response the app returns has already been sent.
    yield* HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))
    return yield* app
  })
)
