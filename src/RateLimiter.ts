import type { Cause } from "effect"
import { Config, Context, Effect } from "effect"

export interface RatePolicy {
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Seconds until the full budget is back. */
  readonly resetSeconds: number
  /** Seconds a refused client must wait for the next request to pass; 0 when allowed. */
  readonly retryAfterSeconds: number
}

/** The window for one key after a request: whether the request was recorded, and when slots free up. */
export interface WindowStep {
  readonly allowed: boolean
  /** Requests recorded in the window, this one included when allowed. */
  readonly used: number
  /** µs until the oldest recorded request leaves the window. */
  readonly nextFreeMicros: number
  /** µs until the newest recorded request leaves the window. */
  readonly allFreeMicros: number
}

/** The port a rate-limit store implements (adapters/ratelimit: one process in memory, or Redis shared by desks). */
export interface RateStore {
  readonly take: (
    key: string,
    limit: number,
    windowMicros: number
  ) => Effect.Effect<WindowStep, Cause.UnknownException | Cause.TimeoutException>
  /** The same step answered at once, by a store in this process's memory; absent where the store is elsewhere. */
  readonly takeNow?: (key: string, limit: number, windowMicros: number) => WindowStep
}

const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

export const policyConfig: Config.Config<RatePolicy> = Config.all({
  limit: positiveInteger("DESK_RATE_LIMIT", 180),
  windowSeconds: positiveInteger("DESK_RATE_WINDOW_SECONDS", 60)
})

/** The limit in words, as the status and the discovery documents tell it to agents. */
export const rateLimitWords = (policy: RatePolicy) =>
  `${policy.limit} JSON requests per IP per ${policy.windowSeconds} seconds, then 429 with Retry-After`

const seconds = (micros: number) => Math.ceil(micros / 1_000_000)

export class RateLimiter extends Context.Tag("RateLimiter")<RateLimiter, {
  readonly consume: (key: string) => Effect.Effect<RateDecision>
  /**
   * `consume` answered at once, where the store is in this process's memory (it never fails): the edge calls it
   * on every limited request, where each effect step costs. Undefined where the store must be asked elsewhere.
   */
  readonly consumeNow: ((key: string) => RateDecision) | undefined
  readonly policy: RatePolicy
}>() {
  /**
   * Sliding-window log: a request passes iff fewer than `limit` requests from its key passed in the last
   * `windowSeconds`, so no window-long span ever holds `limit + 1`, however the requests are spread (a token
   * bucket or GCRA refills during the span and lets a fast sequential client past `limit`). Refusals are not
   * recorded, so a client that keeps knocking while limited still gets in once Retry-After has passed.
   */
  static readonly make = (policy: RatePolicy, store: RateStore, fallback?: RateStore["takeNow"]) =>
    Effect.gen(function*() {
      const windowMicros = policy.windowSeconds * 1_000_000
      // Whether the store answered last time: a plain flag, read on every request without an effect of its own.
      let storeUp = true

      const decide = ({ allFreeMicros, allowed, nextFreeMicros, used }: WindowStep): RateDecision => ({
        allowed,
        limit: policy.limit,
        remaining: Math.max(0, policy.limit - used),
        resetSeconds: seconds(allFreeMicros),
        // Rounded up, so after that wait the oldest request has left the window and a slot is free.
        retryAfterSeconds: allowed ? 0 : Math.max(1, seconds(nextFreeMicros))
      })

      const open: RateDecision = {
        allowed: true,
        limit: policy.limit,
        remaining: policy.limit,
        resetSeconds: 0,
        retryAfterSeconds: 0
      }
      /**
       * A rate limiter that cannot reach its store must not take the desk down with it: without the store a
       * request is decided by `fallback` (this process's memory, so each desk process holds a client to the
       * limit by itself: DESK_WORKERS processes let at most that many times it through), else it passes.
       */
      const withoutStore = fallback === undefined
        ? () => open
        : (key: string) => decide(fallback(key, policy.limit, windowMicros))
      const meanwhile = fallback === undefined
        ? "requests pass unlimited"
        : "each desk process limits its clients in its own memory"

      // One warning per outage, not per request.
      const storeDown = (key: string, cause: Cause.UnknownException | Cause.TimeoutException) => {
        const decision = withoutStore(key)
        if (!storeUp) return Effect.succeed(decision)
        storeUp = false
        return Effect.as(
          Effect.logWarning(`Rate limit store unavailable (${cause.message}); ${meanwhile} until it answers`),
          decision
        )
      }

      const answered = (step: WindowStep) => {
        if (storeUp) return Effect.succeed(decide(step))
        storeUp = true
        return Effect.as(Effect.logInfo("Rate limit store answers again"), decide(step))
      }

      const takeNow = store.takeNow
      return RateLimiter.of({
        policy,
        consumeNow: takeNow === undefined ? undefined : (key) => decide(takeNow(key, policy.limit, windowMicros)),
        // Not an Effect.fn: it runs on every request, and its span would go nowhere.
        consume: (key: string) =>
          Effect.matchEffect(store.take(key, policy.limit, windowMicros), {
            onFailure: (cause) => storeDown(key, cause),
            onSuccess: answered
          })
      })
    })
}
