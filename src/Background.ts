import { Cause, Duration, Effect, Layer } from "effect"
import { DeskConfig } from "./Config.ts"
import { Ledger } from "./Ledger.ts"
import { Payouts } from "./Payouts.ts"
import { RailProfile } from "./Settlement.ts"

/**
 * One background fiber for the on-chain rail, scoped to the desk: reconciles settlements nobody is
 * finishing and works the payout outbox, at startup, right after each paid unlock, and every interval.
 */
export const BackgroundLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const rail = yield* RailProfile
    if (!rail.x402Ready) return
    const ledger = yield* Ledger
    const payouts = yield* Payouts
    const config = yield* DeskConfig
    const tick = Effect.all([ledger.reconcile, payouts.runOnce]).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logError("settlement reconciliation or payout failed", Cause.pretty(cause))
      )
    )
    const wait = Effect.raceFirst(Effect.sleep(Duration.millis(config.outboxIntervalMs)), payouts.nextKick)
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(tick, wait)))
  })
)
