import { Effect, Layer } from "effect"
import { RateLimiter, type RatePolicy, type RateStore, type WindowStep } from "../../src/RateLimiter.ts"

/**
 * Sliding-window log for one process: per key, the times (µs) of its requests allowed in the last window, oldest
 * first. Its clock is the one of the fiber that makes it (a test's TestClock).
 */
export const make = Effect.map(Effect.clock, (clock): RateStore & { readonly trackedKeys: () => number } => {
  const logs = new Map<string, Array<number>>()
  let sweptAt = 0

  // A key whose every request has left the window has a full budget, the same as no entry, so dropping it
  // loses nothing and keeps one entry per client seen in the last window rather than per client ever seen.
  const sweep = (now: number, windowMicros: number) => {
    if (now - sweptAt < windowMicros) return
    sweptAt = now
    for (const [key, log] of logs) if (log[log.length - 1]! <= now - windowMicros) logs.delete(key)
  }

  const takeNow = (key: string, limit: number, windowMicros: number): WindowStep => {
    const now = Number(clock.unsafeCurrentTimeNanos() / 1000n)
    sweep(now, windowMicros)
    const held = logs.get(key) ?? []
    while (held.length > 0 && held[0]! <= now - windowMicros) held.shift()
    // Only allowed requests are appended, so the log never holds more than `limit` entries.
    const allowed = held.length < limit
    // A new log is made at its size: `[]` grown by push reserves room for 17 entries, and behind a proxy a
    // desk sees many clients with one request each (140,000 such keys: 40 MB of heap as [] + push, 22 MB so).
    const log = !allowed ? held : held.length === 0 ? [now] : (held.push(now), held)
    if (log.length > 0) logs.set(key, log)
    else logs.delete(key)
    return {
      allowed,
      used: log.length,
      nextFreeMicros: log.length > 0 ? log[0]! + windowMicros - now : 0,
      allFreeMicros: log.length > 0 ? log[log.length - 1]! + windowMicros - now : 0
    }
  }

  return {
    trackedKeys: () => logs.size,
    takeNow,
    take: (key, limit, windowMicros) => Effect.sync(() => takeNow(key, limit, windowMicros))
  }
})

/** The rate limiter over this process's own memory: one budget per client for a single desk process. */
export const layer = (policy: RatePolicy) =>
  Layer.effect(RateLimiter, Effect.flatMap(make, (store) => RateLimiter.make(policy, store)))
