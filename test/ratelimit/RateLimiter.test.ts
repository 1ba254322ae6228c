import { describe, expect, it, type Vitest } from "@effect/vitest"
import { Cause, Clock, ConfigProvider, Duration, Effect, Logger, Redacted, type Scope, TestClock } from "effect"
import { Redis } from "ioredis"
import * as MemoryStore from "../../adapters/ratelimit/Memory.ts"
import * as RedisStore from "../../adapters/ratelimit/Redis.ts"
import { policyConfig, RateLimiter, type RatePolicy, type RateStore } from "../../src/RateLimiter.ts"
import { delayProxy } from "../support/DelayProxy.ts"
import { REDIS_URL, redisUp } from "../support/Redis.ts"

const policy: RatePolicy = { limit: 5, windowSeconds: 2 }
const redisUrl = Redacted.make(REDIS_URL)
const runPrefix = `desk-test:${process.pid}:${Date.now()}:`

type Limiter = RateLimiter["Type"]

/** Consumes until refused; returns how many passed. */
const drain = (limiter: Limiter, key: string) =>
  Effect.gen(function*() {
    let passed = 0
    while ((yield* limiter.consume(key)).allowed) passed++
    return passed
  })

const contract = (
  test: Vitest.Test<Scope.Scope>,
  makeLimiter: Effect.Effect<Limiter, never, Scope.Scope>,
  wait: (duration: Duration.Duration) => Effect.Effect<void>
) => {
  test("lets `limit` through, then refuses with remaining 0", () =>
    Effect.gen(function*() {
      const limiter = yield* makeLimiter
      const decisions = yield* Effect.forEach(Array.from({ length: 6 }), () => limiter.consume("burst"))
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
      expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0])
      expect(decisions.map((d) => d.resetSeconds)).toEqual([2, 2, 2, 2, 2, 2])
      expect(decisions[5]!.retryAfterSeconds).toBe(2)
    }))

  test("refuses request `limit + 1` even when the first `limit` are spread over most of the window", () =>
    Effect.gen(function*() {
      const limiter = yield* makeLimiter
      // Each request at its time from the first, not after the one before: on a busy machine (Redis, real time) late
      // wake-ups added up and carried the sixth past the first one's window.
      const start = yield* Clock.currentTimeMillis
      const at = (ms: number) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => wait(Duration.millis(Math.max(0, start + ms - now))))
      // 0, 0.4, 0.8, 1.2, 1.6 s: a bucket refilling one unit per 400 ms would pass the sixth at 1.8 s.
      for (let i = 0; i < 5; i++) {
        yield* at(400 * i)
        expect((yield* limiter.consume("spread")).allowed).toBe(true)
      }
      yield* at(1800)
      const refused = yield* limiter.consume("spread")
      expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1, resetSeconds: 2 })
      yield* wait(Duration.seconds(refused.retryAfterSeconds))
      expect((yield* limiter.consume("spread")).allowed).toBe(true)
    }))

  test("waiting exactly Retry-After seconds lets the next request through", () =>
    Effect.gen(function*() {
      const limiter = yield* makeLimiter
      expect(yield* drain(limiter, "retry")).toBe(5)
      yield* wait(Duration.millis(500))
      // 1.5 s until the first request leaves: rounding down would send the client back a half second early.
      const refused = yield* limiter.consume("retry")
      expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 2 })
      yield* wait(Duration.seconds(refused.retryAfterSeconds))
      expect((yield* limiter.consume("retry")).allowed).toBe(true)
    }))

  test("no second full burst just after a window boundary", () =>
    Effect.gen(function*() {
      const limiter = yield* makeLimiter
      expect((yield* limiter.consume("edge")).allowed).toBe(true)
      yield* wait(Duration.millis(1900))
      const beforeEdge = yield* drain(limiter, "edge")
      yield* wait(Duration.millis(200))
      const afterEdge = yield* drain(limiter, "edge")
      // A fixed window anchored at the first request would pass 4 + 5 here; only the first request's slot frees.
      expect(beforeEdge).toBe(4)
      expect(afterEdge).toBe(1)
    }))

  test("refused requests do not use the budget", () =>
    Effect.gen(function*() {
      const limiter = yield* makeLimiter
      expect(yield* drain(limiter, "hammer")).toBe(5)
      for (let round = 0; round < 4; round++) {
        const refused = yield* Effect.forEach(Array.from({ length: 10 }), () => limiter.consume("hammer"))
        expect(refused.every((d) => !d.allowed)).toBe(true)
        yield* wait(Duration.millis(500))
      }
      expect(yield* drain(limiter, "hammer")).toBe(5)
    }))

  test("keys have separate budgets", () =>
    Effect.gen(function*() {
      const limiter = yield* makeLimiter
      expect(yield* drain(limiter, "alice")).toBe(5)
      expect((yield* limiter.consume("bob")).allowed).toBe(true)
    }))
}

const memoryLimiter = Effect.flatMap(MemoryStore.make, (store) => RateLimiter.make(policy, store))

describe("RateLimiter (memory)", () => {
  contract(it.scoped, memoryLimiter, (duration) => TestClock.adjust(duration))

  it.effect("Retry-After is tight: a millisecond less is still refused", () =>
    Effect.gen(function*() {
      const limiter = yield* memoryLimiter
      yield* drain(limiter, "tight")
      const { retryAfterSeconds } = yield* limiter.consume("tight")
      yield* TestClock.adjust(Duration.millis(retryAfterSeconds * 1000 - 1))
      expect((yield* limiter.consume("tight")).allowed).toBe(false)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* limiter.consume("tight")).allowed).toBe(true)
    }))

  it.effect("consumeNow answers at once from the same budget and clock as consume", () =>
    Effect.gen(function*() {
      const limiter = yield* memoryLimiter
      const now = limiter.consumeNow!
      expect([now("both"), yield* limiter.consume("both"), now("both")].map((d) => d.remaining)).toEqual([4, 3, 2])
      expect(yield* drain(limiter, "both")).toBe(2)
      expect(now("both")).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 2 })
      yield* TestClock.adjust(Duration.seconds(2))
      expect(now("both")).toMatchObject({ allowed: true, remaining: 4 })
    }))

  it.effect("forgets clients whose requests have all left the window", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make
      const limiter = yield* RateLimiter.make(policy, store)
      yield* limiter.consume("gone")
      yield* TestClock.adjust(Duration.seconds(3))
      yield* limiter.consume("other")
      expect(store.trackedKeys()).toBe(1)
      expect((yield* limiter.consume("gone")).remaining).toBe(4)
    }))

  // Behind a proxy nearly every request can be a new client: what the store holds is one log per client of the
  // last window, never more, however the clients' requests fall against any sweep.
  it.effect("holds only the clients of the last window, a returning client kept with its budget", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.make
      const limiter = yield* RateLimiter.make(policy, store)
      const at = (seconds: number) => TestClock.setTime(seconds * 1000)
      yield* at(1)
      yield* limiter.consume("first")
      yield* at(1.1)
      yield* limiter.consume("returning")
      yield* at(1.5)
      yield* limiter.consume("once")
      yield* at(2.9)
      yield* limiter.consume("returning")
      // 3.6: "first" (1) and "once" (1.5) have left the 2 s window, "returning" has one request in it (2.9).
      yield* at(3.6)
      yield* limiter.consume("new")
      expect(store.trackedKeys()).toBe(2)
      expect((yield* limiter.consume("returning")).remaining).toBe(3)
      expect((yield* limiter.consume("once")).remaining).toBe(4)
    }))

  it.effect("a budget of one request a window refuses the second and allows one again once the first has left", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({ limit: 1, windowSeconds: 2 }, yield* MemoryStore.make)
      expect((yield* limiter.consume("single")).allowed).toBe(true)
      yield* TestClock.adjust(Duration.millis(1_999))
      expect(yield* limiter.consume("single")).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 })
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* limiter.consume("single")).toMatchObject({ allowed: true, remaining: 0 })
      expect((yield* limiter.consume("single")).allowed).toBe(false)
    }))
})

// Concurrent: every test has its own prefix, and most of their time is spent waiting for the window.
describe.concurrent("RateLimiter (Redis)", () => {
  let run = 0
  // Each test gets its own prefix, so reruns and parallel suites never share a budget by accident.
  const redisLimiter = (prefix: string) =>
    RedisStore.make({ url: redisUrl, prefix }).pipe(Effect.flatMap((store) => RateLimiter.make(policy, store)))
  const fresh = Effect.suspend(() => redisLimiter(`${runPrefix}${++run}:`))
  const redisClient = Effect.acquireRelease(
    Effect.sync(() => new Redis(Redacted.value(redisUrl))),
    (client) => Effect.promise(() => client.quit())
  )

  // Skipped, not failed, where no Redis listens on 127.0.0.1:6379 (CI without the service, laptops).
  const live = it.scopedLive.skipIf(!redisUp)

  contract(live, fresh, (duration) => Effect.sleep(duration))

  live(
    "has no answer at once: every decision asks Redis, which the desks share",
    () => Effect.map(fresh, (limiter) => expect(limiter.consumeNow).toBeUndefined())
  )

  live("two desks on one Redis share one budget", () =>
    Effect.gen(function*() {
      const prefix = `${runPrefix}shared:`
      const desks = [yield* redisLimiter(prefix), yield* redisLimiter(prefix)]
      const decisions = yield* Effect.forEach(Array.from({ length: 6 }), (_, i) => desks[i % 2]!.consume("client"))
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
      const refused = yield* desks[0]!.consume("client")
      expect(refused.allowed).toBe(false)
      yield* Effect.sleep(Duration.seconds(refused.retryAfterSeconds))
      expect((yield* desks[1]!.consume("client")).allowed).toBe(true)
    }))

  live("concurrent requests through two desks never pass more than `limit`", () =>
    Effect.gen(function*() {
      const prefix = `${runPrefix}race:`
      const desks = [yield* redisLimiter(prefix), yield* redisLimiter(prefix)]
      const decisions = yield* Effect.forEach(
        Array.from({ length: 40 }),
        (_, i) => desks[i % 2]!.consume("client"),
        { concurrency: "unbounded" }
      )
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5)
    }))

  live("stores only allowed requests, in a key that expires with the window", () =>
    Effect.gen(function*() {
      const prefix = `${runPrefix}stored:`
      const limiter = yield* redisLimiter(prefix)
      const redis = yield* redisClient
      yield* Effect.forEach(Array.from({ length: 20 }), () => limiter.consume("client"))
      const [count, ttl] = yield* Effect.promise(() =>
        Promise.all([redis.zcard(`${prefix}client`), redis.pttl(`${prefix}client`)])
      )
      expect(count).toBe(5)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(2000)
    }))
})

describe("policyConfig", () => {
  const policyFrom = (env: Record<string, string>) =>
    policyConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

  it.effect("defaults to 180 per 60 seconds in memory", () =>
    Effect.gen(function*() {
      expect(yield* policyFrom({})).toEqual({ limit: 180, windowSeconds: 60 })
      expect(yield* policyFrom({ DESK_RATE_LIMIT: "30", DESK_RATE_WINDOW_SECONDS: "10" })).toEqual({
        limit: 30,
        windowSeconds: 10
      })
    }))

  it.effect("refuses to start on a limit that is not a positive integer", () =>
    Effect.gen(function*() {
      for (const env of [{ DESK_RATE_LIMIT: "0" }, { DESK_RATE_LIMIT: "1.5" }, { DESK_RATE_WINDOW_SECONDS: "-60" }]) {
        const error = yield* Effect.flip(policyFrom(env))
        expect(String(error)).toMatch(/DESK_RATE_(LIMIT|WINDOW_SECONDS)/)
      }
    }))
})

describe("RateLimiter (store failure)", () => {
  const down: RateStore = { take: () => Effect.fail(new Cause.UnknownException("connection refused")) }

  it.effect("fails open and warns once per outage", () =>
    Effect.gen(function*() {
      const warnings: Array<unknown> = []
      const limiter = yield* RateLimiter.make(policy, down)
      const decisions = yield* Effect.forEach(Array.from({ length: 7 }), () => limiter.consume("client")).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => warnings.push(message))))
      )
      expect(decisions.every((d) => d.allowed)).toBe(true)
      expect(warnings).toHaveLength(1)
    }))

  it.effect("says when the store answers again, and warns again at the next outage", () =>
    Effect.gen(function*() {
      let up = false
      const flaky: RateStore = {
        take: (key, limit, windowMicros) =>
          up ? healthy.take(key, limit, windowMicros) : down.take(key, limit, windowMicros)
      }
      const healthy = yield* MemoryStore.make
      const messages: Array<unknown> = []
      const limiter = yield* RateLimiter.make(policy, flaky)
      const consume = (times: number) =>
        Effect.repeatN(limiter.consume("client"), times - 1).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => messages.push(message))))
        )
      yield* consume(3)
      up = true
      const decision = yield* consume(2)
      expect(decision).toMatchObject({ allowed: true, remaining: policy.limit - 2 })
      up = false
      yield* consume(3)
      expect(messages.map(String)).toEqual([
        expect.stringContaining("Rate limit store unavailable"),
        "Rate limit store answers again",
        expect.stringContaining("Rate limit store unavailable")
      ])
    }))

  it.scopedLive.skipIf(!redisUp)(
    "a Redis that stops answering holds a decision half a second, then fails open",
    () =>
      Effect.gen(function*() {
        const proxy = yield* delayProxy({ host: "127.0.0.1", port: 6379 }, 0)
        const limiter = yield* RedisStore.make({
          url: Redacted.make(`redis://127.0.0.1:${proxy.port}`),
          prefix: `${runPrefix}stalled:`
        }).pipe(Effect.flatMap((store) => RateLimiter.make(policy, store)))
        expect((yield* limiter.consume("client")).allowed).toBe(true)
        proxy.setDelay(10_000)
        const [elapsed, decision] = yield* Effect.timed(limiter.consume("client"))
        expect(decision.allowed).toBe(true)
        expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(450)
        expect(Duration.toMillis(elapsed)).toBeLessThan(2_000)
      }),
    20_000
  )

  it.scopedLive("an unreachable Redis answers at once instead of holding requests", () =>
    Effect.gen(function*() {
      const limiter = yield* RedisStore.make({ url: Redacted.make("redis://127.0.0.1:1"), prefix: runPrefix }).pipe(
        Effect.flatMap((store) => RateLimiter.make(policy, store))
      )
      const [elapsed, decision] = yield* Effect.timed(limiter.consume("client"))
      expect(decision.allowed).toBe(true)
      expect(Duration.toMillis(elapsed)).toBeLessThan(100)
    }), 10_000)

  it.scopedLive(
    "the desk's Redis limiter holds each client to the limit in memory while Redis is unreachable",
    () =>
      Effect.gen(function*() {
        const messages: Array<string> = []
        const limiter = yield* Effect.provide(
          RateLimiter,
          RedisStore.layer(policy, { url: Redacted.make("redis://127.0.0.1:1"), prefix: runPrefix })
        )
        const decisions = yield* Effect.forEach(Array.from({ length: 7 }), () => limiter.consume("client")).pipe(
          Effect.provide(
            Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => messages.push(String(message))))
          )
        )
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false])
        expect(decisions[5]).toMatchObject({ remaining: 0, retryAfterSeconds: 2 })
        // Each client has its own budget there too.
        expect((yield* limiter.consume("another client")).allowed).toBe(true)
        expect(messages.filter((_) => _.includes("Rate limit store unavailable"))).toEqual([
          expect.stringContaining("each desk process limits its clients in its own memory")
        ])
      }),
    20_000
  )
})
