import { RateLimited } from "../Domain/Errors.ts"
import type { RateDecision, RatePolicy } from "../RateLimiter.ts"
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

export const refusal = (policy: RatePolicy, decision: RateDecision) =>
  errorResponse(
    RateLimited,
    new RateLimited({
      message: `This address has used its ${policy.limit} requests per ${policy.windowSeconds} seconds; ` +
        `retry in ${decision.retryAfterSeconds} second${decision.retryAfterSeconds === 1 ? "" : "s"}.`
    }),
    { ...rateLimitHeaders(policy, decision), "retry-after": String(decision.retryAfterSeconds) }
  )
