import { Effect, Layer } from "effect"
import { RateLimiter, type RatePolicy, type RateStore, type WindowStep } from "../../src/RateLimiter.ts"

/**
 * A key's requests allowed in the last window (times in µs), oldest first: a time alone where there is one, as for
 * most clients behind a proxy (a Map entry with a number took 85 bytes of heap against 125 with a one-element
 * array: 8 MB less per 200,000 such clients), else a list.
 */
type Log = number | Array<number>
const newestOf = (log: Log) => typeof log === "number" ? log : log[log.length - 1]!

/**
 * Sliding-window log for one process, per key. Its clock is the one of the fiber that makes it (a test's
 * TestClock).
 *
 * The keys are kept in the order of their latest allowed request (a key is moved to the end when one is allowed),
 * so those whose every request has left the window are at the front: each decision drops them from there. A key
 * so dropped has a full budget, the same as no entry, so nothing is lost, and the store holds one log per client
 * of the last window, however many clients come and go. (Swept once a window instead, it held up to two windows'
 * worth: behind a proxy, where nearly every request can be a new client, ~20 MB of heap more.)
 */
export const make = Effect.map(Effect.clock, (clock): RateStore & { readonly trackedKeys: () => number } => {
  const logs = new Map<string, Log>()

  const expire = (now: number, windowMicros: number) => {
    // Deleting the entry a Map's iterator stands on is allowed; the iteration goes on with the next one.
    for (const [key, log] of logs) {
      if (newestOf(log) > now - windowMicros) return
      logs.delete(key)
    }
  }

  const takeNow = (key: string, limit: number, windowMicros: number): WindowStep => {
    const now = Number(clock.unsafeCurrentTimeNanos() / 1000n)
    expire(now, windowMicros)
    const kept = logs.get(key)
    const held = kept === undefined ? [] : typeof kept === "number" ? [kept] : kept
    while (held.length > 0 && held[0]! <= now - windowMicros) held.shift()
    // Only allowed requests are appended, so the log never holds more than `limit` entries.
    const allowed = held.length < limit
    // A lone time still in the window becomes a list at its size (`[kept]` grown by push reserves room for 17).
    const lone = typeof kept === "number" && held.length === 1
    const log = !allowed ? held : lone ? [kept, now] : (held.push(now), held)
    if (allowed) {
      // To the end: its latest request is now the newest of all.
      logs.delete(key)
      logs.set(key, log.length === 1 ? now : log)
    }
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
