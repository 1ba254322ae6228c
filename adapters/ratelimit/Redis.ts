import { Cause, Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { RateLimiter, type RatePolicy, type RateStore } from "../../src/RateLimiter.ts"
import * as MemoryStore from "./Memory.ts"

// A sorted set per key, scored by the time (µs) of each allowed request. Redis's own clock (TIME), not
// each desk's, so desks with skewed clocks still share one window. Refusals write nothing, and the key
// expires when its newest request leaves the window, so idle clients cost nothing.
const slidingWindow = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
local used = redis.call("ZCARD", KEYS[1])
local allowed = 0
if used < limit then
  redis.call("ZADD", KEYS[1], now, ARGV[3])
  redis.call("PEXPIRE", KEYS[1], math.ceil(window / 1000))
  used = used + 1
  allowed = 1
end
if used == 0 then return { allowed, 0, 0, 0 } end
local oldest = tonumber(redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")[2])
local newest = tonumber(redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")[2])
return { allowed, used, oldest + window - now, newest + window - now }
`

/** The longest one rate-limit decision waits for Redis before the limiter decides without it. */
const COMMAND_TIMEOUT_MS = 500

interface WindowRedis extends Redis {
  deskSlidingWindow(
    key: string,
    limit: number,
    windowMicros: number,
    member: string
  ): Promise<[number, number, number, number]>
}

export interface RedisStoreOptions {
  readonly url: Redacted.Redacted
  readonly prefix?: string
}

export const make = Effect.fn("RedisRateStore.make")(function*(options: RedisStoreOptions) {
  const prefix = options.prefix ?? "desk:ratelimit:"
  const redis = yield* Effect.acquireRelease(
    Effect.sync(() => {
      // Without the offline queue a command fails at once while Redis is away, instead of holding the request.
      // A Redis that stops answering holds a request at most COMMAND_TIMEOUT_MS, by ioredis' own timer per command:
      // an Effect.timeout around each command (a fiber raced against a sleep) cost /api/status 160-230 us of its
      // 430-520 us of CPU per request on the Redis store.
      const client = new Redis(Redacted.value(options.url), {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: COMMAND_TIMEOUT_MS
      })
      client.defineCommand("deskSlidingWindow", { numberOfKeys: 1, lua: slidingWindow })
      // ioredis prints every reconnect failure unless someone listens; the limiter logs outages itself.
      client.on("error", () => {})
      return client as WindowRedis
    }),
    (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
  )

  yield* Effect.async<void>((resume) => {
    if (redis.status === "ready") return resume(Effect.void)
    const ready = () => resume(Effect.void)
    redis.once("ready", ready)
    return Effect.sync(() => redis.off("ready", ready))
  }).pipe(
    Effect.timeout("3 seconds"),
    Effect.catchAll(() =>
      Effect.logWarning(
        "Redis did not answer at startup; each desk process limits its clients in its own memory until it does"
      )
    )
  )

  // Members must be unique across desks: two requests in the same microsecond are still two requests.
  const desk = randomUUID()
  let sent = 0

  return {
    take: (key, limit, windowMicros) =>
      Effect.tryPromise({
        try: () => redis.deskSlidingWindow(prefix + key, limit, windowMicros, `${desk}:${++sent}`),
        catch: (error) =>
          new Cause.UnknownException(error, `Redis: ${error instanceof Error ? error.message : String(error)}`)
      }).pipe(
        Effect.map(([allowed, used, nextFreeMicros, allFreeMicros]) => ({
          allowed: allowed === 1,
          used,
          nextFreeMicros,
          allFreeMicros
        }))
      )
  } satisfies RateStore
})

/**
 * The rate limiter over Redis: desks sharing one Redis share one budget per client. While Redis does not answer,
 * each desk process holds its clients to the limit in its own memory.
 */
export const layer = (policy: RatePolicy, options: RedisStoreOptions) =>
  Layer.scoped(
    RateLimiter,
    Effect.flatMap(
      Effect.all([make(options), MemoryStore.make]),
      ([store, memory]) => RateLimiter.make(policy, store, memory.takeNow)
    )
  )
