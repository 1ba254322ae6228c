import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either, Fiber, Option } from "effect"
import type { SealedRow } from "../Catalog/HandoffRepo.ts"
import { HandoffRepo } from "../Catalog/HandoffRepo.ts"
import { DeskConfig } from "../Config.ts"
import { PaymentInvalid, SettlementPending } from "../Domain/Errors.ts"
import type { DeskId } from "../Domain/Ids.ts"
import { AgentRepo } from "../Identity/AgentRepo.ts"
import { Payouts } from "../Payouts.ts"
import type { Offer, PaymentRail, TransferRef, VerifiedPayment } from "../Settlement.ts"
import { spanned } from "../Spans.ts"
import { brokenConstraint, isUniqueViolation } from "../Sql.ts"
import { offerOf } from "./Offer.ts"
import { ReceiptRepo } from "./ReceiptRepo.ts"
import type { ReceiptRow } from "./ReceiptRow.ts"
import { capExceeded, kindOf, spendOf } from "./Rules.ts"
import { Sales } from "./Sales.ts"
import { SettlementRepo, type SettlementRow } from "./SettlementRepo.ts"

export interface Unlocked {
  readonly alreadyUnlocked: boolean
  readonly receipt: ReceiptRow
  /** The on-chain payment behind this receipt, answered in X-PAYMENT-RESPONSE / PAYMENT-RESPONSE. */
  readonly settled: Option.Option<{ readonly payment: VerifiedPayment; readonly txHash: string }>
}

const RETRY_AFTER_SECONDS = 5

/** The facilitator's word that the nonce is spent proves nothing about by whom: the chain is asked instead. */
const NONCE_USED = "invalid_exact_evm_nonce_already_used"

const NOT_PAID: Record<string, string> = {
  authorization_expired: "The authorization expired unused; nothing was charged. Sign a new payment.",
  payment_already_used: "The on-chain transfer behind this payment already paid for another unlock: one payment buys " +
    "one unlock. Sign a new payment."
}
/** The unique keys that name a payment (one transfer, one wallet's nonce): breaking one means it backs another unlock. */
const PAYMENT_KEYS: ReadonlySet<string> = new Set([
  "receipts_one_transfer",
  "settlements_one_transfer",
  "receipts_wallet_nonce"
])
const SPENT =
  "The authorization was used on-chain without paying this desk (cancelled, or its transfer went elsewhere); " +
  "this desk was not paid by it. Sign a new payment."

const pending = () =>
  new SettlementPending({
    message: "The payment is being confirmed on-chain. Retry the same request with the same payment header in a few " +
      "seconds: it returns the outcome and never charges twice. Do not sign a new payment.",
    retryAfterSeconds: RETRY_AFTER_SECONDS
  })

const verifiedOf = (row: SettlementRow): VerifiedPayment => ({
  payerAddress: row.payer_address,
  nonce: row.nonce,
  amountMicro: row.price_micro,
  validBefore: row.valid_before,
  payment: row.payment,
  paymentId: row.payment_id
})

/**
 * The x402 branch of an unlock. Order of events: every check that moves nothing, then the claim (one per
 * identity and handoff, spend reserved within the cap), then settlement, then the receipt and its payout row
 * in one transaction. A claim fails only on proof that its authorization can never pay the desk: anything
 * uncertain leaves it pending (202), to be resolved on-chain by a retry with the same payment or by the
 * reconciler, so a buyer charged on-chain always ends with its receipt.
 */
export const makePaidUnlock = (rail: PaymentRail) =>
  Effect.gen(function*() {
    const fn = yield* spanned
    const sql = yield* SqlClient.SqlClient
    const handoffs = yield* HandoffRepo
    const agents = yield* AgentRepo
    const receipts = yield* ReceiptRepo
    const settlements = yield* SettlementRepo
    const sales = yield* Sales
    const worker = yield* Payouts
    const { publicUrl } = yield* DeskConfig
    // Long enough for one bounded settlement attempt; after a crash the claim is free again once it lapses.
    const leaseSeconds = Math.ceil(Duration.toSeconds(rail.settleTimeout)) + 5

    const refused = (offer: Offer, reason: string, message: string) =>
      new PaymentInvalid({ message, reason, accepts: rail.challenge(offer) })

    /** The checks that need no chain, at this moment. */
    const check = (offer: Offer, header: string) =>
      Effect.sync(() => rail.check(offer, header, Math.floor(Date.now() / 1000)))
    /** What names a payment that may be claimed already: its time was judged when it was claimed. */
    const identified = (offer: Offer, header: string) =>
      Effect.sync(() => Either.getRight(rail.check(offer, header, undefined)))

    const handoffOf = (seq: number) => Effect.map(handoffs.findSealed(seq), Option.getOrThrow)

    const refusedFor = (row: SettlementRow, reason: string, message: string) =>
      Effect.flatMap(
        handoffOf(row.handoff_seq),
        (handoff) => Effect.fail(refused(offerOf(publicUrl, handoff), reason, message))
      )

    const receiptOf = (payer: string, handoffSeq: number) =>
      Effect.map(receipts.findFor(payer, handoffSeq), Option.getOrThrow)

    const settledOf = (row: SettlementRow): Unlocked["settled"] =>
      row.tx_hash === null ? Option.none() : Option.some({ payment: verifiedOf(row), txHash: row.tx_hash })

    /**
     * A settlement as answered to a request carrying the same authorization: in that request's own x402 version
     * (its header, X-PAYMENT-RESPONSE or PAYMENT-RESPONSE), which a v2 envelope around a v1 claim's signature, or
     * the reverse, does not share with the claim.
     */
    const answeredTo = (payment: VerifiedPayment, settled: Unlocked["settled"]): Unlocked["settled"] =>
      Option.map(settled, (_) =>
        _.payment.nonce === payment.nonce && _.payment.payerAddress === payment.payerAddress
          ? { ..._, payment }
          : _)

    /** The receipt, its payout row and the settled claim: one transaction, so a paid unlock is never half-recorded. */
    const record = (seq: number, transfer: TransferRef) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* settlements.lock(seq)
        if (row.status === "settled") {
          return {
            alreadyUnlocked: true,
            receipt: yield* receiptOf(row.payer, row.handoff_seq),
            settled: settledOf(row)
          }
        }
        // Failed meanwhile (its transfer backs another unlock): the refusal stands.
        if (row.status === "failed") return yield* resume(row)
        const receipt = yield* sales.record({
          handoff: yield* handoffOf(row.handoff_seq),
          payer: row.payer,
          payment: Option.some({
            transfer,
            payerAddress: row.payer_address,
            nonce: row.nonce,
            fromBlock: BigInt(row.from_block)
          })
        })
        yield* settlements.markSettled(seq, transfer, receipt.receipt_id)
        return {
          alreadyUnlocked: false,
          receipt,
          settled: Option.some({ payment: verifiedOf(row), txHash: transfer.txHash })
        } satisfies Unlocked
      }))

    /** The one transfer that paid for this claim; a transfer that already backs another unlock backs no second one. */
    const finalize = (
      row: SettlementRow,
      transfer: TransferRef
    ): Effect.Effect<Unlocked, PaymentInvalid | SettlementPending> =>
      record(row.seq, transfer).pipe(
        // Only a constraint that names the payment itself says so: any other leaves the buyer charged, so the claim
        // stays pending (its lease lapses and the reconciler tries again) rather than be failed.
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error) && PAYMENT_KEYS.has(brokenConstraint(error) ?? "")
            ? fail(row, "payment_already_used", NOT_PAID["payment_already_used"]!)
            : Effect.die(error)),
        Effect.tap(() => worker.kick)
      )

    /** Only on proof that the authorization cannot pay the desk through this claim; its reserved spend is given back. */
    const fail = (
      row: SettlementRow,
      reason: string,
      message: string
    ): Effect.Effect<Unlocked, PaymentInvalid | SettlementPending> =>
      Effect.gen(function*() {
        const failed = yield* sql.withTransaction(Effect.gen(function*() {
          const failed = yield* settlements.markFailed(row.seq, reason)
          if (failed && row.spend_micro > 0) yield* settlements.releaseSpend(row.payer, row.spend_micro)
          return failed
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        // Another attempt resolved the claim first: its outcome is the answer.
        if (!failed) return yield* resume(Option.getOrThrow(yield* settlements.byNonce(row.payer_address, row.nonce)))
        return yield* refusedFor(row, reason, message)
      })

    const stillPending = (row: SettlementRow) => Effect.zipRight(settlements.release(row.seq), Effect.fail(pending()))

    /**
     * One settlement attempt by the lease holder. `lookupFirst`: the chain is asked before settling (a claim seen
     * again, or one whose nonce the facilitator says is spent); a fresh claim skips it, its verification just ran.
     */
    const attempt = (
      row: SettlementRow,
      lookupFirst: boolean
    ): Effect.Effect<Unlocked, PaymentInvalid | SettlementPending> =>
      Effect.gen(function*() {
        const payment = verifiedOf(row)
        const fromBlock = BigInt(row.from_block)
        if (lookupFirst) {
          const found = yield* rail.lookup(payment, fromBlock)
          switch (found._tag) {
            case "Used":
              return yield* finalize(row, found.transfer)
            case "Spent":
              return yield* fail(row, found.reason, SPENT)
            case "Unknown":
              return yield* stillPending(row)
            case "Unused":
              if (found.expired) return yield* fail(row, "authorization_expired", NOT_PAID["authorization_expired"]!)
          }
        }
        // A fresh claim was written with its first attempt counted; any other is counted before it may broadcast.
        const earlierAttempts = lookupFirst ? yield* settlements.startAttempt(row.seq) : 0
        const outcome = yield* rail.settle(payment, fromBlock)
        switch (outcome._tag) {
          case "Settled":
            return yield* finalize(row, outcome.transfer)
          case "NotPaid":
            return yield* fail(row, outcome.reason, NOT_PAID[outcome.reason] ?? SPENT)
          case "Refused":
            if (earlierAttempts === 0) return yield* fail(row, outcome.reason, outcome.message)
            yield* Effect.logWarning(
              "a settlement retry was refused; an earlier attempt may land, the claim stays pending",
              outcome.reason
            )
            return yield* stillPending(row)
          case "Unknown":
            yield* Effect.logWarning("settlement outcome unknown; the claim stays pending", outcome.detail)
            return yield* stillPending(row)
        }
      })

    /**
     * An attempt that outlives its request: a client that hangs up interrupts its request's fiber (a 499), and an
     * attempt interrupted after its broadcast left the buyer charged and its claim pending until its lease lapsed,
     * each retry meanwhile a 202, for minutes. Its own fiber decides the claim (its receipt, or its release) whoever
     * is still waiting for it.
     */
    const attemptToTheEnd = (row: SettlementRow, lookupFirst: boolean) =>
      Effect.flatMap(Effect.forkDaemon(attempt(row, lookupFirst)), Fiber.join)

    /** A claim seen again (a retry with the same payment, or the reconciler): its outcome, never a new charge. */
    const resume = (row: SettlementRow): Effect.Effect<Unlocked, PaymentInvalid | SettlementPending> =>
      Effect.gen(function*() {
        if (row.status === "settled") {
          return {
            alreadyUnlocked: true,
            receipt: yield* receiptOf(row.payer, row.handoff_seq),
            settled: settledOf(row)
          }
        }
        if (row.status === "failed") {
          const reason = row.failure_reason ?? "payment_invalid"
          return yield* refusedFor(
            row,
            reason,
            `This payment was refused earlier (${reason}); this desk was not paid by it. Sign a new one.`
          )
        }
        const leased = yield* settlements.lease(row.seq, leaseSeconds)
        if (Option.isNone(leased)) return yield* Effect.fail(pending())
        return yield* attemptToTheEnd(leased.value, true)
      })

    const claim = (
      agent: DeskId,
      handoff: SealedRow,
      payment: VerifiedPayment,
      fromBlock: bigint,
      settleNow: boolean
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const account = yield* agents.lock(agent)
        const existing = yield* receipts.findFor(agent, handoff.seq)
        if (Option.isSome(existing)) return { _tag: "Unlocked" as const, receipt: existing.value }
        const spend = spendOf(kindOf(handoff, agent), "x402", handoff.price_micro)
        if (spend > 0 && Option.isNone(yield* agents.spend(agent, spend))) {
          return yield* Effect.fail(capExceeded(account, handoff.price_micro, agent))
        }
        const row = yield* settlements.insert({
          payer: agent,
          handoffSeq: handoff.seq,
          priceMicro: handoff.price_micro,
          spendMicro: spend,
          payerAddress: payment.payerAddress,
          nonce: payment.nonce,
          validBefore: payment.validBefore,
          fromBlock,
          payment: payment.payment,
          paymentId: payment.paymentId,
          leaseSeconds,
          settleAttempts: settleNow ? 1 : 0
        })
        return { _tag: "Claimed" as const, row }
      })).pipe(
        // A concurrent request with the same payment, payment id, or another payment for this unlock, claimed first.
        Effect.catchTag(
          "SqlError",
          (error) => isUniqueViolation(error) ? Effect.succeed({ _tag: "Conflict" as const }) : Effect.die(error)
        ),
        Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
      )

    const idReused = (offer: Offer) =>
      refused(
        offer,
        "payment_identifier_reused",
        "This payment id already names another purchase (another handoff or another buyer); use a new payment id."
      )

    /**
     * A payment id seen again: the first purchase's outcome, whatever authorization this retry carries (it is never
     * settled); the id of one purchase never buys another.
     */
    const sameIdAgain = (row: SettlementRow, agent: DeskId, handoff: SealedRow, offer: Offer) => {
      if (row.payer !== agent || row.handoff_seq !== handoff.seq) return Effect.fail(idReused(offer))
      if (row.status === "failed") {
        const reason = row.failure_reason ?? "payment_invalid"
        return refusedFor(
          row,
          reason,
          `The purchase under this payment id was refused earlier (${reason}); this desk was not paid by it. Sign a ` +
            "new payment under a new payment id."
        )
      }
      return resume(row)
    }

    const alreadyUsed = (offer: Offer) =>
      refused(
        offer,
        "payment_already_used",
        "This payment already bought another unlock: one payment buys one unlock. Sign a new one."
      )

    /**
     * The answer for a payment (or payment id) that a claim already holds, which decides it: its own outcome for the
     * unlock it claimed, `payment_already_used` for any other; none for a payment no claim holds.
     */
    const claimedBefore = (agent: DeskId, handoff: SealedRow, payment: VerifiedPayment, offer: Offer) =>
      Effect.gen(function*() {
        const prior = yield* settlements.byNonce(payment.payerAddress, payment.nonce)
        if (Option.isSome(prior)) {
          if (prior.value.payer === agent && prior.value.handoff_seq === handoff.seq) {
            const unlocked = yield* resume(prior.value)
            return Option.some({ ...unlocked, settled: answeredTo(payment, unlocked.settled) })
          }
          return yield* Effect.fail(alreadyUsed(offer))
        }
        if (payment.paymentId !== null) {
          const named = yield* settlements.byPaymentId(payment.paymentId)
          if (Option.isSome(named)) return Option.some(yield* sameIdAgain(named.value, agent, handoff, offer))
        }
        return Option.none<Unlocked>()
      })

    const unlock = fn("Ledger.unlockPaid")(function*(agent: DeskId, handoff: SealedRow, header: string) {
      const offer = offerOf(publicUrl, handoff)
      const checked = yield* check(offer, header)
      if (Either.isLeft(checked)) {
        // A retry of a payment claimed earlier, now close to or past its expiry, returns that claim's outcome (a
        // 202 while it settles, then its receipt): a fresh 402 would invite a second payment for a charged one.
        const payment = yield* identified(offer, header)
        const seen = Option.isSome(payment) ? yield* claimedBefore(agent, handoff, payment.value, offer) : Option.none()
        if (Option.isSome(seen)) return seen.value
        return yield* Effect.fail(refused(offer, checked.left.reason, checked.left.message))
      }
      const payment = checked.right
      const seen = yield* claimedBefore(agent, handoff, payment, offer)
      if (Option.isSome(seen)) return seen.value
      const live = yield* settlements.live(agent, handoff.seq)
      if (Option.isSome(live)) {
        // An earlier payment for this unlock is still settling: this one stays unused unless that one fails.
        const earlier = yield* Effect.either(resume(live.value))
        if (earlier._tag === "Right") return earlier.right
        if (earlier.left._tag === "SettlementPending") return yield* Effect.fail(earlier.left)
      }
      // Also the first sign of an RPC outage: a clean 503 before anything is recorded.
      const fromBlock = yield* rail.blockNumber
      const refusal = yield* rail.verify(payment)
      // Spent already: by a transfer that paid the desk (submitted by the buyer or anyone holding it) or not. Claimed
      // like any payment, and decided by the chain.
      const spentAlready = Option.exists(refusal, (_) => _.reason === NONCE_USED)
      if (Option.isSome(refusal) && !spentAlready) {
        return yield* Effect.fail(refused(offer, refusal.value.reason, refusal.value.message))
      }
      const claimed = yield* claim(agent, handoff, payment, fromBlock, !spentAlready)
      if (claimed._tag === "Unlocked") {
        // Bought meanwhile (by a copy of this payment settling on another request or desk, most likely): its
        // settlement, when it was this payment, as a replay of it would get.
        return {
          alreadyUnlocked: true,
          receipt: claimed.receipt,
          settled: yield* settledBy(handoff, agent, header)
        } satisfies Unlocked
      }
      if (claimed._tag === "Conflict") {
        // A concurrent request claimed first: with this payment or payment id, whose claim decides this answer as
        // it would have a moment later (another unlock's is `payment_already_used` now, not a 202 first); or with
        // another payment for this unlock, still settling.
        const decided = yield* claimedBefore(agent, handoff, payment, offer)
        if (Option.isSome(decided)) return decided.value
        return yield* Effect.fail(pending())
      }
      return yield* attemptToTheEnd(claimed.row, spentAlready)
    })

    /**
     * The settlement behind an existing receipt, when this header is the payment that bought it, or a retry under
     * that payment's id with another authorization (which gets the first purchase's outcome, its settlement too).
     */
    const settledBy = (handoff: SealedRow, agent: DeskId, header: string) =>
      Effect.gen(function*() {
        const offer = offerOf(publicUrl, handoff)
        // However close to its expiry: a replay of the payment that bought it gets its settlement.
        const payment = yield* identified(offer, header)
        if (Option.isNone(payment)) return Option.none()
        const { nonce, payerAddress, paymentId } = payment.value
        const byNonce = yield* settlements.byNonce(payerAddress, nonce)
        const row = Option.isSome(byNonce) || paymentId === null ? byNonce : yield* settlements.byPaymentId(paymentId)
        if (Option.isNone(row)) return Option.none()
        // A payment (or payment id) that bought another unlock is spent, whoever sends it: an identity that holds
        // this handoff is refused it as anyone else is, not answered 200 as if it were its own.
        if (row.value.payer !== agent || row.value.handoff_seq !== handoff.seq) {
          return yield* Effect.fail(Option.isSome(byNonce) ? alreadyUsed(offer) : idReused(offer))
        }
        return answeredTo(payment.value, settledOf(row.value))
      })

    /** Pending claims nobody is settling (a crash, a lost answer): settled, failed on proof, or left pending, never lost. */
    const reconcile = Effect.gen(function*() {
      const seqs = yield* settlements.stale(20)
      let resolved = 0
      for (const seq of seqs) {
        const leased = yield* settlements.lease(seq, leaseSeconds)
        if (Option.isNone(leased)) continue
        const outcome = yield* Effect.either(attempt(leased.value, true))
        if (outcome._tag === "Right" || outcome.left._tag === "PaymentInvalid") resolved++
      }
      return resolved
    }).pipe(Effect.withSpan("Ledger.reconcile"))

    /**
     * A 202 for an identity whose payment for this handoff is still settling, which reads the body before its
     * receipt exists: a 402 there would have an x402 client sign a second payment for what it is being charged.
     */
    const stillSettling = (agent: DeskId, handoffSeq: number) =>
      Effect.flatMap(
        settlements.live(agent, handoffSeq),
        (row) => Option.isSome(row) && row.value.status === "pending" ? Effect.fail(pending()) : Effect.void
      )

    return { unlock, settledBy, stillSettling, reconcile } as const
  })
