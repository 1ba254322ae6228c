import { Config, Context, Effect, Layer } from "effect"
import { poolSizeConfig } from "../Storage.ts"

/**
 * How many requests one client (rate-limit key) may have in progress at once: below the database pool, so no
 * single client holds every connection while others wait. Default three quarters of DESK_DB_POOL.
 */
export const concurrencyConfig: Config.Config<number> = Config.all([
  poolSizeConfig,
  Config.integer("DESK_CLIENT_CONCURRENCY").pipe(
    Config.validate({ message: "DESK_CLIENT_CONCURRENCY must be a positive integer", validation: (n) => n >= 1 }),
    Config.option
  )
]).pipe(Config.map(([pool, set]) => set._tag === "Some" ? set.value : Math.max(1, Math.floor((pool * 3) / 4))))

/**
 * How many more of one client's requests wait for one of its slots: an agent that sends 50 unlocks at once is
 * served `cap` at a time, not refused; past the line it is a 429 (the rate limit bounds it per window too).
 */
export const LINE = 100

/** A request waiting for one of its client's slots; `granted` once a finishing request handed it its slot. */
export interface Waiter {
  granted: boolean
  wake: (() => void) | undefined
}

export const make = (cap: number, line = LINE) => {
  const inFlight = new Map<string, number>()
  const lines = new Map<string, Array<Waiter>>()
  return {
    cap,
    line,
    /**
     * Counts one more request in progress for `key`, or returns false (counting nothing) when `key` already has
     * `cap` of them. Every true must be matched by one `leave(key)`, however the request ends. Plain functions,
     * not effects: the edge calls them on every request, where each effect step costs.
     */
    enter: (key: string): boolean => {
      const now = inFlight.get(key) ?? 0
      if (now >= cap) return false
      inFlight.set(key, now + 1)
      return true
    },
    /** Whether `key`'s line has room for one more. */
    hasRoom: (key: string): boolean => (lines.get(key)?.length ?? 0) < line,
    /**
     * A place at the end of `key`'s line, or none when it is full. A waiter ends with `leave(key)` once granted,
     * with `abandon` before: however the request ends.
     */
    join: (key: string): Waiter | undefined => {
      const waiting = lines.get(key) ?? []
      if (waiting.length >= line) return undefined
      const waiter: Waiter = { granted: false, wake: undefined }
      waiting.push(waiter)
      lines.set(key, waiting)
      return waiter
    },
    abandon: (key: string, waiter: Waiter): void => {
      const waiting = lines.get(key)
      if (waiting === undefined) return
      const at = waiting.indexOf(waiter)
      if (at >= 0) waiting.splice(at, 1)
      if (waiting.length === 0) lines.delete(key)
    },
    /** A finished request's slot goes to the first in its client's line, else it is free again. */
    leave: (key: string): void => {
      const next = lines.get(key)?.shift()
      if (next !== undefined) {
        if (lines.get(key)!.length === 0) lines.delete(key)
        next.granted = true
        next.wake?.()
        return
      }
      const left = inFlight.get(key)! - 1
      if (left === 0) inFlight.delete(key)
      else inFlight.set(key, left)
    }
  }
}

/** Resumes once `waiter` holds a slot. */
export const turnOf = (waiter: Waiter): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (waiter.granted) resume(Effect.void)
    else waiter.wake = () => resume(Effect.void)
  })

export class ClientConcurrency extends Context.Tag("ClientConcurrency")<ClientConcurrency, ReturnType<typeof make>>() {
  static readonly layerConfig = Layer.effect(ClientConcurrency, Effect.map(concurrencyConfig, (cap) => make(cap)))
  static readonly layer = (cap: number, line?: number) => Layer.succeed(ClientConcurrency, make(cap, line))
}
