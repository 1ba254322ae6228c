import { RateLimited } from "../Domain/Errors.ts"
import type { RateDecision, RatePolicy } from "../RateLimiter.ts"
import { errorResponse } from "./Respond.ts"

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

/** The refusal of a client with `cap` requests in progress and a full line of `line` behind them. */
export const busyError = (cap: number, line: number) =>
  new RateLimited({
    message: `This address has ${cap} requests in progress, the most one client may have at once, and ` +
      `${line} more waiting; wait for them to finish, then retry in 1 second.`
  })

/** A client with `cap` requests in progress and a full line behind them: it waits for them, not the rate window. */
export const busy = (cap: number, line: number) =>
  errorResponse(RateLimited, busyError(cap, line), { "retry-after": "1" })

/**
 * A read of the database (one that waits for a turn in the desk) from a client whose `cap` slots its other requests
 * hold: it is not held waiting for them while it holds a turn other clients wait for.
 */
export const busyReading = (cap: number) =>
  errorResponse(
    RateLimited,
    new RateLimited({
      message: `This address has ${cap} requests in progress, the most one client may have at once, and a read ` +
        "of the catalog does not wait behind them; retry in 1 second, or once one of them has finished."
    }),
    { "retry-after": "1" }
  )
