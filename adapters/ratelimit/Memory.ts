import { Effect } from "effect"
import type { GcraStore } from "../../src/RateLimiter.ts"

/** GCRA state for one process: the theoretical arrival time (µs) per key. */
export const make = Effect.sync((): GcraStore => {
  const arrivals = new Map<string, number>()
  let sweptAt = 0

  // An arrival time in the past means a full budget, the same as no entry, so dropping it loses nothing
  // and keeps one entry per client seen in the last window rather than per client ever seen.
  const sweep = (now: number, every: number) => {
    if (now - sweptAt < every) return
    sweptAt = now
    for (const [key, tat] of arrivals) if (tat <= now) arrivals.delete(key)
  }

  return {
    take: (key, intervalMicros, toleranceMicros) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const now = Number(clock.unsafeCurrentTimeNanos() / 1000n)
          sweep(now, toleranceMicros)
          const tat = Math.max(arrivals.get(key) ?? now, now)
          const next = tat + intervalMicros
          if (next - now > toleranceMicros) return { allowed: false, aheadMicros: tat - now }
          arrivals.set(key, next)
          return { allowed: true, aheadMicros: next - now }
        })
      )
  }
})
