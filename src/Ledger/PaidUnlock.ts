import { SqlClient, type SqlError } from "@effect/sql"
import { Duration, Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { SealedRow } from "../Catalog/HandoffRepo.ts"
import { HandoffRepo } from "../Catalog/HandoffRepo.ts"
import { PaymentInvalid, SettlementPending, type SpendCapExceeded } from "../Domain/Errors.ts"
import type { DeskId } from "../Domain/Ids.ts"
import { splitPrice } from "../Domain/Money.ts"
import { AgentRepo } from "../Identity/AgentRepo.ts"
import { Payouts } from "../Payouts.ts"
import { type Offer, Settlement, type VerifiedPayment } from "../Settlement.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import { ReceiptRepo } from "./ReceiptRepo.ts"
import type { ReceiptKind, ReceiptRow } from "./ReceiptRow.ts"
import { SettlementRepo, type SettlementRow } from "./SettlementRepo.ts"

export interface Unlocked {
  readonly alreadyUnlocked: boolean
  readonly receipt: ReceiptRow
  /** The on-chain payment behind this receipt, answered in X-PAYMENT-RESPONSE / PAYMENT-RESPONSE. */
  readonly settled: Option.Option<{ readonly payment: VerifiedPayment; readonly txHash: string }>
}

export interface PaidHelpers {
  readonly offerOf: (handoff: SealedRow) => Offer
  readonly kindOf: (handoff: SealedRow, payer: string) => ReceiptKind
  readonly capExceeded: (agent: { spent_micro: number; spend_cap_micro: number }, handoff: SealedRow, payer: string) => SpendCapExceeded
}

const RETRY_AFTER_SECONDS = 5
/** Block timestamps trail the wall clock a little: an authorization is treated as dead only well after validBefore. */
const EXPIRY_GRACE_SECONDS = 60

const isUniqueViolation = (error: SqlError.SqlError) => (error.cause as { code?: unknown } | undefined)?.code === "23505"

const newReceiptId = () => `rcpt_${randomBytes(12).toString("hex")}`

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
  payment: row.payment
})

/**
 * The x402 branch of an unlock. Order of events: every check that moves nothing, then the claim (one per
 * identity and handoff, spend reserved within the cap), then settlement, then the receipt and its payout
 * row in one transaction. A claim whose outcome is unknown stays pending and is resolved against the
 * token's authorizationState, by a retry with the same payment or by the reconciler.
 */
export const makePaidUnlock = (helpers: PaidHelpers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const handoffs = yield* HandoffRepo
    const agents = yield* AgentRepo
    const receipts = yield* ReceiptRepo
    const settlements = yield* SettlementRepo
    const payouts = yield* PayoutRepo
    const settlement = yield* Settlement
    const worker = yield* Payouts
    // Long enough for one bounded settlement attempt; after a crash the claim is free again once it lapses.
    const leaseSeconds = Math.ceil(Duration.toSeconds(settlement.settleTimeout)) + 5

    const refused = (offer: Offer, reason: string, message: string) =>
      new PaymentInvalid({ message, reason, accepts: settlement.accepts(offer) })

    const withChallenge = (offer: Offer) => (error: PaymentInvalid) => refused(offer, error.reason, error.message)

    const offerOfSeq = (seq: number) =>
      Effect.map(handoffs.findSealed(seq), (row) => ({ handoff: Option.getOrThrow(row), offer: helpers.offerOf(Option.getOrThrow(row)) }))

    const receiptOf = (payer: string, handoffSeq: number) =>
      Effect.map(receipts.findFor(payer, handoffSeq), Option.getOrThrow)

    const settledOf = (row: SettlementRow): Unlocked["settled"] =>
      row.tx_hash === null ? Option.none() : Option.some({ payment: verifiedOf(row), txHash: row.tx_hash })

    /** The receipt, its payout row and the settled claim: one transaction, so a paid unlock is never half-recorded. */
    const record = (seq: number, txHash: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* settlements.lock(seq)
        if (row.status === "settled") {
          return { alreadyUnlocked: true, receipt: yield* receiptOf(row.payer, row.handoff_seq), settled: settledOf(row) }
        }
        const { handoff } = yield* offerOfSeq(row.handoff_seq)
        const kind = helpers.kindOf(handoff, row.payer)
        const split = splitPrice(row.price_micro)
        const filer = yield* agents.find(handoff.filer_did)
        const payoutAddress = Option.getOrNull(Option.flatMapNullable(filer, (_) => _.payout_address))
        const owesPayout = kind === "sale" && split.filer > 0
        const payable = payoutAddress !== null && Option.isSome(settlement.payouts)
        const receiptId = newReceiptId()
        yield* receipts.insert({
          receiptId,
          handoffSeq: row.handoff_seq,
          payer: row.payer,
          filerDid: handoff.filer_did,
          priceMicro: row.price_micro,
          filerMicro: split.filer,
          deskMicro: split.desk,
          kind,
          mode: "x402",
          network: settlement.rail.network,
          paymentTxHash: txHash,
          paymentPayerAddress: row.payer_address,
          paymentNonce: row.nonce,
          payoutStatus: !owesPayout ? "zero" : payable ? "pending" : "owed",
          payoutAddress
        })
        if (kind !== "self") yield* receipts.countPurchase(row.handoff_seq)
        if (owesPayout) {
          yield* payouts.insert({
            receiptId,
            filerDid: handoff.filer_did,
            amountMicro: split.filer,
            toAddress: payoutAddress,
            status: payable ? "pending" : "owed"
          })
        }
        yield* settlements.markSettled(seq, txHash, receiptId)
        return {
          alreadyUnlocked: false,
          receipt: yield* receiptOf(row.payer, row.handoff_seq),
          settled: Option.some({ payment: verifiedOf(row), txHash })
        } satisfies Unlocked
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const finalize = (seq: number, txHash: string) => Effect.tap(record(seq, txHash), () => worker.kick)

    /** Only for an authorization that moved no money and cannot move it through this claim any more. */
    const fail = (row: SettlementRow, reason: string, message: string) =>
      Effect.gen(function*() {
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* settlements.markFailed(row.seq, reason)
          if (row.spend_micro > 0) yield* settlements.releaseSpend(row.payer, row.spend_micro)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        const { offer } = yield* offerOfSeq(row.handoff_seq)
        return yield* Effect.fail(refused(offer, reason, message))
      })

    const stillPending = (row: SettlementRow) => Effect.zipRight(settlements.release(row.seq), Effect.fail(pending()))

    /** One settlement attempt by the lease holder; a fresh claim skips the lookup its facilitator check just made. */
    const attempt = (row: SettlementRow, fresh: boolean): Effect.Effect<Unlocked, PaymentInvalid | SettlementPending> =>
      Effect.gen(function*() {
        const payment = verifiedOf(row)
        const fromBlock = BigInt(row.from_block)
        if (!fresh) {
          const found = yield* settlement.lookup(payment, fromBlock)
          switch (found._tag) {
            case "Used":
              return yield* finalize(row.seq, found.txHash)
            case "Spent":
              return yield* fail(row, found.reason, "The authorization was used on-chain without paying this desk.")
            case "Unknown":
              return yield* stillPending(row)
            case "Unused":
              if (Date.now() / 1000 > row.valid_before + EXPIRY_GRACE_SECONDS) {
                return yield* fail(row, "authorization_expired", "The authorization expired before it was settled; nothing was charged.")
              }
          }
        }
        const outcome = yield* settlement.settle(payment, fromBlock)
        switch (outcome._tag) {
          case "Settled":
            return yield* finalize(row.seq, outcome.txHash)
          case "Refused":
            return yield* fail(row, outcome.reason, outcome.message)
          case "Unknown":
            yield* Effect.logWarning("settlement outcome unknown; the claim stays pending", outcome.detail)
            return yield* stillPending(row)
        }
      })

    /** A claim seen again (a retry with the same payment, or the reconciler): its outcome, never a new charge. */
    const resume = (row: SettlementRow) =>
      Effect.gen(function*() {
        if (row.status === "settled") {
          return { alreadyUnlocked: true, receipt: yield* receiptOf(row.payer, row.handoff_seq), settled: settledOf(row) }
        }
        if (row.status === "failed") {
          const { offer } = yield* offerOfSeq(row.handoff_seq)
          return yield* Effect.fail(
            refused(offer, row.failure_reason ?? "payment_invalid", "This payment was refused earlier and charged nothing; sign a new one.")
          )
        }
        const leased = yield* settlements.lease(row.seq, leaseSeconds)
        if (Option.isNone(leased)) return yield* Effect.fail(pending())
        return yield* attempt(leased.value, false)
      })

    const claim = (agent: DeskId, handoff: SealedRow, payment: VerifiedPayment, fromBlock: bigint) =>
      sql.withTransaction(Effect.gen(function*() {
        const account = yield* agents.lock(agent)
        const existing = yield* receipts.findFor(agent, handoff.seq)
        if (Option.isSome(existing)) return { _tag: "Unlocked" as const, receipt: existing.value }
        const spend = helpers.kindOf(handoff, agent) === "sale" ? handoff.price_micro : 0
        if (spend > 0 && Option.isNone(yield* agents.spend(agent, spend))) {
          return yield* Effect.fail(helpers.capExceeded(account, handoff, agent))
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
          leaseSeconds
        })
        return { _tag: "Claimed" as const, row }
      })).pipe(
        // A concurrent request with the same payment, or another payment for this unlock, claimed first.
        Effect.catchTag("SqlError", (error) => (isUniqueViolation(error) ? Effect.fail(pending()) : Effect.die(error))),
        Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
      )

    const unlock = Effect.fn("Ledger.unlockPaid")(function*(agent: DeskId, handoff: SealedRow, header: string) {
      const offer = helpers.offerOf(handoff)
      const payment = yield* Effect.mapError(settlement.parse(offer, header), withChallenge(offer))
      const prior = yield* settlements.byNonce(payment.payerAddress, payment.nonce)
      if (Option.isSome(prior)) {
        if (prior.value.payer === agent && prior.value.handoff_seq === handoff.seq) return yield* resume(prior.value)
        return yield* Effect.fail(
          refused(offer, "payment_already_used", "This payment already bought another unlock: one payment buys one unlock. Sign a new one.")
        )
      }
      const live = yield* settlements.live(agent, handoff.seq)
      if (Option.isSome(live)) {
        // An earlier payment for this unlock is still settling: this one stays unused unless that one fails.
        const earlier = yield* Effect.either(resume(live.value))
        if (earlier._tag === "Right") return earlier.right
        if (earlier.left._tag === "SettlementPending") return yield* Effect.fail(earlier.left)
      }
      // Also the first sign of an RPC outage: a clean 503 before anything is recorded.
      const fromBlock = yield* settlement.blockNumber
      yield* Effect.mapError(settlement.verify(payment), (error) => (error._tag === "PaymentInvalid" ? withChallenge(offer)(error) : error))
      const claimed = yield* claim(agent, handoff, payment, fromBlock)
      if (claimed._tag === "Unlocked") return { alreadyUnlocked: true, receipt: claimed.receipt, settled: Option.none() } satisfies Unlocked
      return yield* attempt(claimed.row, true)
    })

    /** The settlement behind an existing receipt, when this header is the payment that bought it. */
    const settledBy = (handoff: SealedRow, agent: DeskId, header: string) =>
      Effect.gen(function*() {
        const payment = yield* Effect.option(settlement.parse(helpers.offerOf(handoff), header))
        if (Option.isNone(payment)) return Option.none()
        const row = yield* settlements.byNonce(payment.value.payerAddress, payment.value.nonce)
        return Option.flatMap(
          Option.filter(row, (_) => _.payer === agent && _.handoff_seq === handoff.seq),
          settledOf
        )
      })

    /** Pending claims nobody is settling (a crash, a lost answer): settled, failed or left pending, never lost. */
    const reconcile = Effect.gen(function*() {
      const seqs = yield* settlements.stale(20)
      let resolved = 0
      for (const seq of seqs) {
        const leased = yield* settlements.lease(seq, leaseSeconds)
        if (Option.isNone(leased)) continue
        const outcome = yield* Effect.either(attempt(leased.value, false))
        if (outcome._tag === "Right" || outcome.left._tag === "PaymentInvalid") resolved++
      }
      return resolved
    }).pipe(Effect.withSpan("Ledger.reconcile"))

    return { unlock, settledBy, reconcile } as const
  })
