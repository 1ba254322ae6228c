import { Cause, Duration, Effect, Redacted } from "effect"
import { Redis } from "ioredis"
import type { GcraStore } from "../../src/RateLimiter.ts"

// Redis's own clock (TIME), not each desk's, so processes with skewed clocks still share one budget.
// The key lives only until its arrival time passes, so idle clients cost nothing.
const gcra = `
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call("GET", KEYS[1])) or now
if tat < now then tat = now end
local nextTat = tat + interval
if nextTat - now > tolerance then
  return { 0, tat - now }
end
redis.call("SET", KEYS[1], nextTat, "PX", math.ceil((nextTat - now) / 1000))
return { 1, nextTat - now }
`

interface GcraRedis extends Redis {
  deskGcra(key: string, intervalMicros: number, toleranceMicros: number): Promise<[number, number]>
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
      const client = new Redis(Redacted.value(options.url), { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
      client.defineCommand("deskGcra", { numberOfKeys: 1, lua: gcra })
      // ioredis prints every reconnect failure unless someone listens; the limiter logs outages itself.
      client.on("error", () => {})
      return client as GcraRedis
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
    Effect.catchAll(() => Effect.logWarning("Redis did not answer at startup; rate limiting fails open until it does"))
  )

  return {
    take: (key, intervalMicros, toleranceMicros) =>
      Effect.tryPromise({
        try: () => redis.deskGcra(prefix + key, intervalMicros, toleranceMicros),
        catch: (error) => new Cause.UnknownException(error, `Redis: ${error instanceof Error ? error.message : String(error)}`)
      }).pipe(
        Effect.timeout(Duration.millis(500)),
        Effect.map(([allowed, aheadMicros]) => ({ allowed: allowed === 1, aheadMicros }))
      )
  } satisfies GcraStore
})
