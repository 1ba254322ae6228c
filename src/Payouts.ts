import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Option, Queue } from "effect"
import { DeskConfig } from "./Config.ts"
import { PayoutRepo, type PayoutRow } from "./Ledger/PayoutRepo.ts"
import { type PayoutRail, Settlement, type SignedPayout } from "./Settlement.ts"

const MAX_RETRY_SECONDS = 600
const BATCH = 20

/** A node's answer to re-broadcasting a transaction it has already seen (or mined). */
const alreadySeen = /already known|already imported|nonce too low|replacement transaction underpriced|nonce has already been used/i

const signedOf = (row: PayoutRow): Option.Option<SignedPayout> =>
  row.signed_tx !== null && row.tx_hash !== null && row.tx_nonce !== null
    ? Option.some({ signedTx: row.signed_tx, txHash: row.tx_hash, txNonce: row.tx_nonce })
    : Option.none()

/**
 * The payout outbox worker. A payout is signed, stored with its hash, and only then broadcast; a stored
 * transaction is re-broadcast until it is mined, and replaced only once it can never be mined (reverted, or
 * its nonce taken by another transaction), so no crash or retry can pay a filer twice.
 */
const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* PayoutRepo
  const settlement = yield* Settlement
  const config = yield* DeskConfig
  const leaseSeconds = Math.ceil(Duration.toSeconds(settlement.settleTimeout)) + 5
  const kicks = yield* Queue.dropping<void>(1)

  const retryIn = (attempts: number) => Math.min((config.payoutRetryMs / 1000) * 2 ** attempts, MAX_RETRY_SECONDS)

  const failed = (row: PayoutRow, error: string) =>
    Effect.zipRight(
      Effect.logWarning("payout failed; it will be retried", { receiptId: row.receipt_id, error }),
      sql.withTransaction(repo.markFailed(row.receipt_id, error, retryIn(row.attempts))).pipe(Effect.orDie)
    )

  const sent = (row: PayoutRow, txHash: string) =>
    sql.withTransaction(repo.markSent(row.receipt_id, txHash)).pipe(Effect.orDie)

  const confirm = (rail: PayoutRail, row: PayoutRow, signed: SignedPayout) =>
    Effect.flatMap(Effect.either(rail.confirm(signed)), (state) => {
      if (state._tag === "Left") return failed(row, state.left)
      switch (state.right._tag) {
        case "Confirmed":
          return sent(row, signed.txHash)
        case "InFlight":
          return repo.retryLater(row.receipt_id, retryIn(0))
        case "Reverted":
        case "Dead":
          return failed(row, `payout transaction ${signed.txHash} ${state.right._tag === "Dead" ? "was replaced" : "reverted"}`)
      }
    })

  const broadcast = (rail: PayoutRail, row: PayoutRow, signed: SignedPayout) =>
    Effect.flatMap(Effect.either(rail.broadcast(signed.signedTx)), (result) =>
      result._tag === "Right" || alreadySeen.test(result.left) ? confirm(rail, row, signed) : failed(row, result.left))

  const signAndStore = (rail: PayoutRail, row: PayoutRow) =>
    Effect.gen(function*() {
      const signed = yield* Effect.either(rail.sign(row.to_address!, row.amount_micro, row.receipt_id))
      if (signed._tag === "Left") {
        yield* failed(row, signed.left)
        return Option.none<SignedPayout>()
      }
      const { signedTx, txHash, txNonce } = signed.right
      // Committed before the broadcast: after a crash the worker finds these bytes and sends them again.
      yield* sql.withTransaction(repo.storeSigned(row.receipt_id, signedTx, txHash, txNonce)).pipe(Effect.orDie)
      return Option.some(signed.right)
    })

  const settle = (rail: PayoutRail, row: PayoutRow) =>
    Effect.gen(function*() {
      const stored = signedOf(row)
      if (Option.isSome(stored)) {
        const state = yield* Effect.either(rail.state(stored.value))
        if (state._tag === "Left") return yield* failed(row, state.left)
        switch (state.right._tag) {
          case "Confirmed":
            return yield* sent(row, stored.value.txHash)
          case "InFlight":
            return yield* broadcast(rail, row, stored.value)
          case "Reverted":
          case "Dead":
            // It can never be mined now, so a new transaction cannot be a second payment.
            yield* repo.discardSigned(row.receipt_id)
        }
      }
      const signed = yield* signAndStore(rail, row)
      if (Option.isSome(signed)) yield* broadcast(rail, row, signed.value)
    })

  /** Promotes owed payouts whose filer now has an address, then works through the due ones. */
  const runOnce = Effect.gen(function*() {
    const rail = settlement.payouts
    if (Option.isNone(rail)) return 0
    yield* sql.withTransaction(repo.promoteOwed).pipe(Effect.orDie)
    let done = 0
    while (done < BATCH) {
      const due = yield* repo.claimDue(leaseSeconds)
      if (Option.isNone(due)) break
      yield* settle(rail.value, due.value)
      done++
    }
    return done
  }).pipe(Effect.withSpan("Payouts.runOnce"))

  return {
    runOnce,
    /** Wakes the background loop now (after a paid unlock) instead of at its next interval. */
    kick: Effect.asVoid(Queue.offer(kicks, undefined)),
    nextKick: Queue.take(kicks)
  } as const
})

export class Payouts extends Context.Tag("Payouts")<Payouts, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Payouts, make).pipe(Layer.provide(PayoutRepo.layer))
}
