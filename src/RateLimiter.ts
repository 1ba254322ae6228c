import type { Cause } from "effect"
import { Config, Context, Effect, Layer, Option, Redacted, Ref } from "effect"
import * as MemoryStore from "../adapters/ratelimit/Memory.ts"
import * as RedisStore from "../adapters/ratelimit/Redis.ts"

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

/** One GCRA step: whether a unit was taken, and how far the theoretical arrival time now lies ahead. */
export interface GcraStep {
  readonly allowed: boolean
  readonly aheadMicros: number
}

export interface GcraStore {
  readonly take: (
    key: string,
    intervalMicros: number,
    toleranceMicros: number
  ) => Effect.Effect<GcraStep, Cause.UnknownException | Cause.TimeoutException>
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

const seconds = (micros: number) => Math.ceil(micros / 1_000_000)

export class RateLimiter extends Context.Tag("RateLimiter")<RateLimiter, {
  readonly consume: (key: string) => Effect.Effect<RateDecision>
  readonly policy: RatePolicy
}>() {
  /**
   * GCRA: a burst of `limit`, then one unit back every `window / limit`. There is no window edge, so no
   * second burst right after the first; the most any window-long span sees is a burst plus the steady
   * refill. The interval is rounded up to a whole µs and the tolerance is `limit` intervals, so the burst
   * is exactly `limit` and all arithmetic stays in integers.
   */
  static readonly make = (policy: RatePolicy, store: GcraStore) =>
    Effect.gen(function*() {
      const interval = Math.ceil((policy.windowSeconds * 1_000_000) / policy.limit)
      const tolerance = interval * policy.limit
      const storeUp = yield* Ref.make(true)

      const decide = ({ allowed, aheadMicros }: GcraStep): RateDecision => ({
        allowed,
        limit: policy.limit,
        remaining: allowed ? Math.floor((tolerance - aheadMicros) / interval) : 0,
        resetSeconds: seconds(aheadMicros),
        retryAfterSeconds: allowed ? 0 : seconds(aheadMicros + interval - tolerance)
      })

      // Fail open: a rate limiter that cannot reach its store must not take the desk down with it.
      // One warning per outage, not per request.
      const failOpen = (cause: Cause.UnknownException | Cause.TimeoutException) =>
        Ref.getAndSet(storeUp, false).pipe(
          Effect.tap((wasUp) =>
            wasUp
              ? Effect.logWarning(`Rate limit store unavailable (${cause.message}); requests pass unlimited until it answers`)
              : Effect.void
          ),
          Effect.as<RateDecision>({ allowed: true, limit: policy.limit, remaining: policy.limit, resetSeconds: 0, retryAfterSeconds: 0 })
        )

      const recovered = Ref.getAndSet(storeUp, true).pipe(
        Effect.flatMap((wasUp) => wasUp ? Effect.void : Effect.logInfo("Rate limit store answers again"))
      )

      return RateLimiter.of({
        policy,
        consume: Effect.fn("RateLimiter.consume")(function*(key: string) {
          return yield* store.take(key, interval, tolerance).pipe(
            Effect.tap(() => recovered),
            Effect.map(decide),
            Effect.catchAll(failOpen)
          )
        })
      })
    })

  static readonly layerMemory = (policy: RatePolicy) =>
    Layer.effect(RateLimiter, Effect.flatMap(MemoryStore.make, (store) => RateLimiter.make(policy, store)))

  static readonly layerRedis = (policy: RatePolicy, options: RedisStore.RedisStoreOptions) =>
    Layer.scoped(RateLimiter, Effect.flatMap(RedisStore.make(options), (store) => RateLimiter.make(policy, store)))

  /** Redis when `REDIS_URL` is set, so several desks share one budget; memory otherwise. */
  static readonly layerConfig = Layer.unwrapEffect(
    Effect.gen(function*() {
      const policy = yield* policyConfig
      const url = Option.filter(
        yield* Config.option(Config.redacted("REDIS_URL")),
        (url) => Redacted.value(url).trim() !== ""
      )
      return Option.match(url, {
        onNone: () => RateLimiter.layerMemory(policy),
        onSome: (url) => RateLimiter.layerRedis(policy, { url })
      })
    })
  )
}
