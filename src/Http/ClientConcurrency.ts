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

export const make = (cap: number) => {
  const inFlight = new Map<string, number>()
  return {
    cap,
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
    leave: (key: string): void => {
      const left = inFlight.get(key)! - 1
      if (left === 0) inFlight.delete(key)
      else inFlight.set(key, left)
    }
  }
}

export class ClientConcurrency extends Context.Tag("ClientConcurrency")<ClientConcurrency, ReturnType<typeof make>>() {
  static readonly layerConfig = Layer.effect(ClientConcurrency, Effect.map(concurrencyConfig, make))
  static readonly layer = (cap: number) => Layer.succeed(ClientConcurrency, make(cap))
}
