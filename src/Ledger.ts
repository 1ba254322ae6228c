import type { SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { HandoffRepo, type SealedRow } from "./Catalog/HandoffRepo.ts"
import { DeskConfig } from "./Config.ts"
import {
  InvalidRequest,
  NotFound,
  NotUnlocked,
  PaymentInvalid,
  PaymentRequired,
  SettlementPending,
  SignInRefused
} from "./Domain/Errors.ts"
import { type DeskId, handoffIdOf, handoffSeq } from "./Domain/Ids.ts"
import { toUsd } from "./Domain/Money.ts"
import { pagesOf } from "./Domain/Paging.ts"
import type { ReceiptQuery } from "./Domain/ReceiptQuery.ts"
import { isStorable } from "./Domain/Text.ts"
import { AgentRepo } from "./Identity/AgentRepo.ts"
import { offerOf } from "./Ledger/Offer.ts"
import { makePaidUnlock, type Unlocked } from "./Ledger/PaidUnlock.ts"
import { PayoutRepo } from "./Ledger/PayoutRepo.ts"
import { ReceiptRepo } from "./Ledger/ReceiptRepo.ts"
import { capExceeded, mayVote, spendOf } from "./Ledger/Rules.ts"
import { Sales } from "./Ledger/Sales.ts"
import { SettlementRepo } from "./Ledger/SettlementRepo.ts"
import { signedReceiptOf } from "./Ledger/SignedReceipts.ts"
import { SignInNonceRepo } from "./Ledger/SignInNonceRepo.ts"
import { toReceipt, toUnlockResponse } from "./Ledger/toReceipt.ts"
import { Payouts } from "./Payouts.ts"
import { ReceiptSigning } from "./ReceiptSigning.ts"
import { RailProfile, Settlement } from "./Settlement.ts"
import type { SignInProof } from "./SignIn.ts"
import { spanned } from "./Spans.ts"
import { isUniqueViolation } from "./Sql.ts"

export type { Unlocked } from "./Ledger/PaidUnlock.ts"

const make = Effect.gen(function*() {
  const fn = yield* spanned
  const handoffs = yield* HandoffRepo
  const receipts = yield* ReceiptRepo
  const settlement = yield* Settlement
  const sales = yield* Sales
  const config = yield* DeskConfig
  const signInNonces = yield* SignInNonceRepo
  const agents = yield* AgentRepo
  const { explorerTxUrl } = yield* RailProfile
  const signing = yield* ReceiptSigning

  const notFound = (id: string) =>
    new NotFound({ message: `No handoff ${id}; ids look like DESK-12 (see /api/discover).` })

  const sealed = fn("Ledger.sealed")(function*(id: string) {
    const seq = handoffSeq(id)
    const row = Option.isSome(seq) ? yield* handoffs.findSealed(seq.value) : Option.none()
    if (Option.isNone(row)) return yield* Effect.fail(notFound(id))
    return row.value
  })

  /** The challenge for a handoff: none on a desk without a payment rail, none for the demo packet (it is free). */
  const acceptsFor = (handoff: SealedRow) =>
    handoff.is_demo ? [] : Option.match(settlement, {
      onNone: () => [],
      onSome: (rail) => rail.challenge(offerOf(config.publicUrl, handoff))
    })

  const paymentRequired = (handoff: SealedRow, message: string) =>
    new PaymentRequired({ message, x402Version: 1, accepts: acceptsFor(handoff) })

  const paid = yield* Option.match(settlement, {
    onNone: () => Effect.succeedNone,
    onSome: (rail) => Effect.asSome(makePaidUnlock(rail))
  })

  const noRail = new PaymentInvalid({
    message: "This desk settles by desk receipt only: unlock without X-PAYMENT.",
    reason: "x402_not_configured"
  })
  // The sandbox's packet moves no USDC: a payment sent for it was settled (0.01 USDC to the desk) and then left
  // out of every total, as demo rows are. It is refused before anything reads it; nothing is charged.
  const demoIsFree = new PaymentInvalid({
    message: "The demo packet is free and moves no USDC: unlock without X-PAYMENT.",
    reason: "demo_is_free"
  })

  /**
   * Under the payer's row lock, in the statement that writes the unlocks arriving with it (ReceiptRepo.deskUnlock):
   * a repeat unlock finds the first receipt, the spend is added only within the cap (a database check holds it
   * too), and (payer, handoff) is unique.
   */
  const recordOnce = (handoff: SealedRow, payer: DeskId) =>
    Effect.gen(function*() {
      const receipt = yield* sales.receiptOf({ handoff, payer, payment: Option.none() })
      const outcome = yield* receipts.deskUnlock(
        receipt,
        spendOf(receipt.kind, "desk", handoff.price_micro),
        handoff.title
      )
      switch (outcome.outcome) {
        case "recorded":
        case "unlocked":
          return {
            alreadyUnlocked: outcome.outcome === "unlocked",
            receipt: outcome.receipt,
            settled: Option.none()
          } satisfies Unlocked
        // An on-chain payment for this unlock is settling: a desk receipt now would sell it twice.
        case "settling":
          return yield* Effect.fail(
            new SettlementPending({
              message: "An on-chain payment for this unlock is being settled; retry it with the same payment header.",
              retryAfterSeconds: 5
            })
          )
        case "over_cap":
          return yield* Effect.fail(capExceeded(outcome.agent, handoff.price_micro, payer))
      }
    })

  type Recording = ReturnType<typeof recordOnce>

  /**
   * desk_unlock_batch reads under the payer's lock, so (payer, handoff) should not collide; if it ever does, the retry
   * finds the receipt that won. A plain catch, not Effect.retry: its schedule cost ~6 us on every unlock.
   */
  const record = (
    handoff: SealedRow,
    payer: DeskId,
    retries = 3
  ): Effect.Effect<
    Unlocked,
    Exclude<Effect.Effect.Error<Recording>, SqlError.SqlError>,
    Effect.Effect.Context<Recording>
  > =>
    Effect.catchTag(
      recordOnce(handoff, payer),
      "SqlError",
      (error) => retries > 0 && isUniqueViolation(error) ? record(handoff, payer, retries - 1) : Effect.die(error)
    )

  /**
   * A desk receipt moves no wallet's USDC, so no wallet can sign in for what it buys: an identity that reads only by
   * Sign-In-With-X (settable on a desk with a chain alone) was charged for a body it could never read. It is asked
   * to pay on-chain instead, before anything is recorded; the paying wallet then reads. The demo packet is read by
   * id whatever the identity chose: its body is given away.
   */
  const readableByDeskReceipt = (agent: DeskId, handoff: SealedRow) =>
    Option.isNone(settlement) || handoff.is_demo ? Effect.void : Effect.flatMap(
      agents.find(agent),
      (record) =>
        Option.exists(record, (_) => _.require_sign_in)
          ? Effect.fail(paymentRequired(
            handoff,
            "This id reads bodies only by Sign-In-With-X, which only a wallet's payment lets it do: a desk receipt " +
              "would buy a body it could never read. Pay on-chain: retry with X-PAYMENT (x402)."
          ))
          : Effect.void
    )

  const unlocked = fn("Ledger.unlocked")(function*(
    agent: DeskId,
    handoffId: string,
    payer: string,
    payment: Option.Option<string>
  ) {
    if (payer !== agent) {
      return yield* Effect.fail(
        new InvalidRequest({
          message: "payer must equal the X-AGENT-ID header.",
          issues: [{ path: "payer", message: "must equal the X-AGENT-ID header" }]
        })
      )
    }
    const handoff = yield* sealed(handoffId)
    if (handoff.is_demo && Option.isSome(payment)) return yield* Effect.fail(demoIsFree)
    // A desk receipt looks for an earlier unlock inside its own transaction.
    if (Option.isNone(payment) && (!config.paymentRequired || handoff.is_demo)) {
      yield* readableByDeskReceipt(agent, handoff)
      return yield* record(handoff, agent)
    }
    const existing = yield* receipts.findFor(agent, handoff.seq)
    // Never charge twice: an attached payment stays unused when the identity already holds the unlock.
    if (Option.isSome(existing)) {
      const settled = Option.isSome(payment) && Option.isSome(paid)
        ? yield* paid.value.settledBy(handoff, agent, payment.value)
        : Option.none()
      return { alreadyUnlocked: true, receipt: existing.value, settled } satisfies Unlocked
    }
    if (Option.isNone(payment)) {
      return yield* Effect.fail(
        paymentRequired(handoff, "This desk requires an on-chain payment: retry with X-PAYMENT.")
      )
    }
    if (Option.isNone(paid)) return yield* Effect.fail(noRail)
    return yield* paid.value.unlock(agent, handoff, payment.value)
  })

  /**
   * An unlock as REST and MCP answer it (the receipt, the body's address, the desk's signed receipt), with the
   * on-chain settlement behind it for the payment-response header.
   */
  const unlock = (agent: DeskId, handoffId: string, payer: string, payment: Option.Option<string>) =>
    Effect.flatMap(
      // A blank payment is none, through either door, as a blank X-AGENT-ID is no identity.
      unlocked(agent, handoffId, payer, Option.filter(payment, (_) => _.trim() !== "")),
      (result) =>
        Effect.map(signedReceiptOf(signing, result.receipt, config.publicUrl), (signed) => ({
          settled: result.settled,
          response: toUnlockResponse(result, explorerTxUrl, signed)
        }))
    )

  /** Receipt records, newest first, as REST and MCP list them: a payer's own unmasked, anyone else's masked. */
  const listReceipts = fn("Ledger.listReceipts")(function*(query: ReceiptQuery) {
    const { rows, total } = yield* receipts.list(query)
    const audience = query.payer === null ? "public" : "buyer"
    return {
      ok: true as const,
      total,
      page: query.page,
      limit: query.limit,
      pages: pagesOf(total, query.limit),
      receipts: rows.map((row) => toReceipt(row, explorerTxUrl, audience))
    }
  })

  /** One receipt for its buyer, with the desk's signature; anyone else is told there is none. */
  const receiptFor = fn("Ledger.receiptFor")(function*(agent: DeskId, receiptId: string) {
    // An id PostgreSQL cannot hold (a NUL) names no receipt; asked for, the database refused it as a 500.
    const found = isStorable(receiptId) ? yield* receipts.findById(receiptId) : Option.none()
    const row = Option.filter(found, (_) => _.payer === agent)
    if (Option.isNone(row)) {
      return yield* Effect.fail(
        new NotFound({ message: `No receipt ${receiptId} for this X-AGENT-ID: a receipt is shown to its buyer.` })
      )
    }
    return {
      ok: true as const,
      receipt: toReceipt(row.value, explorerTxUrl, "buyer"),
      signedReceipt: yield* signedReceiptOf(signing, row.value, config.publicUrl)
    }
  })

  /** The body read by an identity's X-AGENT-ID, unless that identity reads only by signing in with its wallet. */
  const body = (handoffId: string, agent: Option.Option<DeskId>) => readBody(handoffId, agent, "id")

  /**
   * `by`: how the reader proved itself. By its id alone, an identity that chose to read only by signing in with
   * its wallet reads nothing; a sign-in (checked before) reads as the identity the wallet's payment bought for.
   */
  const readBody = fn("Ledger.body")(function*(
    handoffId: string,
    agent: Option.Option<DeskId>,
    by: "id" | "wallet"
  ) {
    const seq = handoffSeq(handoffId)
    // No agent reads as "": no filer or payer has that id, so the body stays sealed.
    const row = Option.isSome(seq)
      ? yield* handoffs.findSealedFor(seq.value, Option.getOrElse(agent, () => ""))
      : Option.none()
    if (Option.isNone(row)) return yield* Effect.fail(notFound(handoffId))
    const handoff = row.value
    if (by === "id" && handoff.reader_requires_sign_in && !handoff.is_demo) {
      return yield* Effect.fail(
        new SignInRefused({
          reason: "siwx_required",
          message: "This id reads bodies only by Sign-In-With-X: request the body without X-AGENT-ID and answer " +
            "the 402's sign-in challenge with the wallet that paid (SIGN-IN-WITH-X)."
        })
      )
    }
    if (handoff.body === null) {
      if (Option.isSome(agent) && Option.isSome(paid)) yield* paid.value.stillSettling(agent.value, handoff.seq)
      const id = handoffIdOf(handoff.seq)
      return yield* Effect.fail(paymentRequired(
        handoff,
        `Unlock ${id} first: POST /api/handoffs/${id}/unlock with X-AGENT-ID and {"payer": <your id>} ` +
          // The demo packet is given away on every desk: its unlock is a demo receipt, no payment (docs/settlement.md).
          (handoff.is_demo
            ? "(free: the demo packet moves no USDC; send no payment)."
            : `(${toUsd(handoff.price_micro)} USD; confirm with your owner before paying).`)
      ))
    }
    return {
      ok: true as const,
      id: handoffIdOf(handoff.seq),
      title: handoff.title,
      hash: handoff.hash,
      body: handoff.body
    }
  })

  /**
   * The body for a wallet that signed in (Sign-In-With-X) instead of naming an identity: read as the identity its
   * payment bought it for. The proof is spent only when it reads; `spend` false (a HEAD, which reads nothing)
   * checks that it is still unspent and leaves it so.
   */
  const bodyForWallet = fn("Ledger.bodyForWallet")(function*(handoffId: string, proof: SignInProof, spend = true) {
    const handoff = yield* sealed(handoffId)
    const bought = yield* receipts.findPaidBy(proof.address, handoff.seq)
    if (Option.isNone(bought)) {
      return yield* Effect.fail(
        new SignInRefused({
          reason: "siwx_wallet_not_paid",
          message: `No payment from ${proof.address} bought ${handoffId}: sign in with the wallet that paid, or ` +
            "unlock it first."
        })
      )
    }
    const fresh = spend
      ? yield* signInNonces.consume(proof.nonce, proof.acceptedUntil)
      : !(yield* signInNonces.used(proof.nonce))
    if (!fresh) {
      return yield* Effect.fail(
        new SignInRefused({
          reason: "siwx_nonce_used",
          message: "This signed message was used already: each sign-in reads once; sign the fresh challenge."
        })
      )
    }
    return yield* readBody(handoffId, Option.some(bought.value.payer as DeskId), "wallet")
  })

  const feedback = fn("Ledger.feedback")(function*(agent: DeskId, handoffId: string, useful: boolean) {
    const handoff = yield* sealed(handoffId)
    const receipt = yield* receipts.findFor(agent, handoff.seq)
    if (Option.isNone(receipt)) {
      return yield* Effect.fail(new NotUnlocked({ message: "Only an identity that bought this handoff can rate it." }))
    }
    if (!mayVote(receipt.value.kind)) {
      return yield* Effect.fail(
        new NotUnlocked({
          message:
            "Only buyers vote: a filer's own unlock and the demo packet's do not count as purchases, so they cannot rate it."
        })
      )
    }
    yield* receipts.vote(handoff.seq, agent, useful)
    const row = yield* handoffs.findBySeq(handoff.seq)
    return {
      ok: true as const,
      id: handoffIdOf(handoff.seq),
      useful: Option.getOrThrow(row).useful,
      notUseful: Option.getOrThrow(row).not_useful,
      yourVote: useful
    }
  })

  return {
    unlock,
    body,
    bodyForWallet,
    feedback,
    /** Claims nobody is settling, resolved from the chain; nothing to do without a payment rail. */
    reconcile: Option.match(paid, { onNone: () => Effect.succeed(0), onSome: (_) => _.reconcile }),
    listReceipts,
    receiptFor,
    recentSales: receipts.recentSales,
    totals: receipts.totals
  } as const
})

export class Ledger extends Context.Tag("Ledger")<Ledger, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Ledger, make).pipe(
    // Payouts.layer is the same value DeskLive provides, so both share one instance (layers memoize by reference).
    Layer.provide(Sales.layer),
    Layer.provide([
      HandoffRepo.layer,
      AgentRepo.layer,
      ReceiptRepo.layer,
      SettlementRepo.layer,
      PayoutRepo.layer,
      SignInNonceRepo.layer,
      Payouts.layer
    ])
  )
}
