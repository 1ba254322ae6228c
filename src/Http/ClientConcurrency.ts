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
  const release = (key: string) =>
    Effect.sync(() => {
      const left = inFlight.get(key)! - 1
      if (left === 0) inFlight.delete(key)
      else inFlight.set(key, left)
    })
  return {
    cap,
    /** Runs `effect` as one of `key`'s requests in progress, or `refused` when `key` already has `cap` of them. */
    run: <A, E, R>(
      key: string,
      effect: Effect.Effect<A, E, R>,
      refused: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        const now = inFlight.get(key) ?? 0
        if (now >= cap) return refused
        inFlight.set(key, now + 1)
        return Effect.ensuring(effect, release(key))
      })
  }
}

export class ClientConcurrency extends Context.Tag("ClientConcurrency")<ClientConcurrency, ReturnType<typeof make>>() {
  static readonly layerConfig = Layer.effect(ClientConcurrency, Effect.map(concurrencyConfig, make))
  static readonly layer = (cap: number) => Layer.succeed(ClientConcurrency, make(cap))
}
