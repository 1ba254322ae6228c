import { Context, Data, Duration, Effect, Layer, Option, Queue } from "effect"
import { randomUUID } from "node:crypto"
import { DeskConfig } from "./Config.ts"
import { type Lease, PayoutRepo, type PayoutRow } from "./Ledger/PayoutRepo.ts"
import { PayoutChannel, type PayoutFailure, type PayoutRail, type SignedPayout } from "./Payouts/Rail.ts"

const MAX_RETRY_SECONDS = 600
const BATCH = 20
/** Room for the database writes around a step, beyond the step's own bound. */
const LEASE_MARGIN_SECONDS = 5

/** A node's answer to re-broadcasting a transaction it has already seen (or mined). */
const alreadySeen =
  /already known|already imported|nonce too low|replacement transaction underpriced|nonce has already been used/i

/** Another worker took the payout over (this one's lease lapsed): stop without writing or broadcasting anything. */
class LostLease extends Data.TaggedError("LostLease")<{ readonly receiptId: string }> {}

const signedOf = (row: PayoutRow): Option.Option<SignedPayout> =>
  row.signed_tx !== null && row.tx_hash !== null && row.tx_nonce !== null
    ? Option.some({ signedTx: row.signed_tx, txHash: row.tx_hash, txNonce: row.tx_nonce })
    : Option.none()

/**
 * The payout outbox worker. A payout is signed, stored with its hash, and only then broadcast; a stored
 * transaction is re-broadcast until it is mined, and replaced only once it can never be mined (reverted, or its
 * nonce taken by another transaction) and no mined transfer carries its reference. Each claim of a payout takes
 * a new lease token; every write names it, and the lease is renewed before each bounded step, so a worker whose
 * lease lapsed (a slow RPC, a paused process) stops before it can store, broadcast or overwrite anything.
 */
const make = Effect.gen(function*() {
  const repo = yield* PayoutRepo
  const channel = yield* PayoutChannel
  const config = yield* DeskConfig
  const kicks = yield* Queue.dropping<void>(1)
  // One worker per process: payouts and settlements share the wallet's nonce counter, which two concurrent
  // signers in one process could leave with a gap.
  const oneAtATime = yield* Effect.makeSemaphore(1)

  const retryIn = (attempts: number) => Math.min((config.payoutRetryMs / 1000) * 2 ** attempts, MAX_RETRY_SECONDS)

  const work = (rail: PayoutRail, lease: Lease) => {
    const { row } = lease
    const leaseSeconds = Math.ceil(Duration.toSeconds(rail.stepTimeout)) + LEASE_MARGIN_SECONDS
    const held = (
      written: boolean
    ) => (written ? Effect.void : Effect.fail(new LostLease({ receiptId: row.receipt_id })))
    const renew = Effect.flatMap(repo.renew(lease, leaseSeconds), held)
    /** One bounded step; the lease, renewed just before, outlasts it. */
    const step = <A>(effect: Effect.Effect<A, PayoutFailure>) =>
      Effect.zipRight(
        renew,
        Effect.either(Effect.timeoutFail(Effect.mapError(effect, (_) => _.message), {
          duration: rail.stepTimeout,
          onTimeout: () => "timed out"
        }))
      )

    const failed = (error: string) =>
      Effect.zipRight(
        Effect.logWarning("payout failed; it will be retried", { receiptId: row.receipt_id, error }),
        Effect.flatMap(repo.markFailed(lease, error, retryIn(row.attempts)), held)
      )
    const sent = (txHash: string) => Effect.flatMap(repo.markSent(lease, txHash), held)

    const confirm = (signed: SignedPayout) =>
      Effect.flatMap(step(rail.confirm(signed)), (state) => {
        if (state._tag === "Left") return failed(state.left)
        switch (state.right._tag) {
          case "Confirmed":
            return sent(signed.txHash)
          case "InFlight":
            return Effect.flatMap(repo.retryLater(lease, retryIn(0)), held)
          case "Reverted":
          case "Dead":
            return failed(
              `payout transaction ${signed.txHash} ${state.right._tag === "Dead" ? "was replaced" : "reverted"}`
            )
        }
      })

    const broadcast = (signed: SignedPayout) =>
      Effect.flatMap(
        step(rail.broadcast(signed.signedTx)),
        (result) => result._tag === "Right" || alreadySeen.test(result.left) ? confirm(signed) : failed(result.left)
      )

    const signAndSend = Effect.gen(function*() {
      const signed = yield* step(rail.sign(row.to_address!, row.amount_micro, row.receipt_id))
      if (signed._tag === "Left") {
        // Given up on after it took a nonce (it timed out as it signed): the next transaction must not skip it.
        yield* rail.resetNonces
        return yield* failed(signed.left)
      }
      // Committed before the broadcast, and only while the lease is held: bytes that could not be stored are never sent.
      const stored = yield* repo.storeSigned(lease, signed.right)
      if (!stored) return yield* held(false)
      return yield* broadcast(signed.right)
    })

    return Effect.gen(function*() {
      const stored = signedOf(row)
      if (Option.isNone(stored)) return yield* signAndSend
      const state = yield* step(rail.state(stored.value))
      if (state._tag === "Left") return yield* failed(state.left)
      switch (state.right._tag) {
        case "Confirmed":
          return yield* sent(stored.value.txHash)
        case "InFlight":
          return yield* broadcast(stored.value)
        case "Reverted":
        case "Dead": {
          // It can never be mined now; a replacement is safe unless another of this payout's transactions was.
          const mined = yield* step(
            rail.findMined(
              row.to_address!,
              row.amount_micro,
              row.receipt_id,
              BigInt(row.from_block ?? 0),
              state.right.seenAt
            )
          )
          if (mined._tag === "Left") return yield* failed(mined.left)
          if (Option.isSome(mined.right)) return yield* sent(mined.right.value)
          yield* Effect.flatMap(repo.discardSigned(lease), held)
          return yield* signAndSend
        }
      }
    }).pipe(
      Effect.catchTag(
        "LostLease",
        (lost) =>
          // It may have signed what it will never send: the wallet's next transaction takes the chain's nonce.
          Effect.zipRight(
            rail.resetNonces,
            Effect.logInfo("payout lease lost to another worker; stopping", lost.receiptId)
          )
      )
    )
  }

  /** Promotes owed payouts whose filer now has an address, then works through the due ones. */
  const runOnce = Effect.gen(function*() {
    if (Option.isNone(channel)) return 0
    const rail = channel.value
    yield* repo.promoteOwed
    const leaseSeconds = Math.ceil(Duration.toSeconds(rail.stepTimeout)) + LEASE_MARGIN_SECONDS
    let done = 0
    while (done < BATCH) {
      const token = randomUUID()
      const due = yield* repo.claimDue(leaseSeconds, token)
      if (Option.isNone(due)) break
      yield* work(rail, { row: due.value, token })
      done++
    }
    return done
  }).pipe(oneAtATime.withPermits(1), Effect.withSpan("Payouts.runOnce"))

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
