import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { DeskApi } from "../Api.ts"
import { DeskConfig } from "../Config.ts"
import { AgentIdRequired } from "../Domain/Errors.ts"
import type { DeskId } from "../Domain/Ids.ts"
import { toUsd } from "../Domain/Money.ts"
import { BodyResponse, UnlockResponse } from "../Domain/Receipt.ts"
import { toReceiptQuery } from "../Domain/ReceiptQuery.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { failureHeaders, settledHeaders } from "../Http/PaymentHeaders.ts"
import { answeredPrivately, encodedAsIs, PRIVATE_ANSWER } from "../Http/Respond.ts"
import { CallingAgent, CurrentAgent } from "../Identity/AgentAuth.ts"
import { Ledger } from "../Ledger.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { RailProfile, Settlement } from "../Settlement.ts"
import { SignIn } from "../SignIn.ts"
import { toReceipt } from "./toReceipt.ts"

/** The x402 payment of a request: X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2); a blank one is none. */
const paymentOf = (
  headers: { readonly "x-payment"?: string | undefined; readonly "payment-signature"?: string | undefined }
) =>
  Option.fromNullable(
    [headers["x-payment"], headers["payment-signature"]].find((_) => _ !== undefined && _.trim() !== "")
  )

const payerRequired = new AgentIdRequired({
  message: "A payment sent with the body request buys it for the X-AGENT-ID of that request: send your identity " +
    "in the X-AGENT-ID header (did:desk: + 32 lowercase hex) with the payment. Nothing was charged."
})

export const LedgerHttp = HttpApiBuilder.group(DeskApi, "ledger", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const settlement = yield* Settlement
    const signIn = yield* SignIn
    const signing = yield* ReceiptSigning
    const { publicUrl } = yield* DeskConfig
    const rail = yield* RailProfile
    /** An unlock with the settlement's payment-response header on the answer. */
    const unlock = (agent: DeskId, id: string, payer: string, payment: Option.Option<string>) =>
      Effect.tap(
        ledger.unlock(agent, id, payer, payment),
        ({ settled }) => settledHeaders(settlement, signing, settled, `${publicUrl}/api/handoffs/${id}/unlock`)
      )
    const receiptFor = (audience: "buyer" | "public") => (row: Parameters<typeof toReceipt>[0]) =>
      toReceipt(row, rail.explorerTxUrl, audience)

    return handlers
      .handle("unlock", ({ headers, path, payload }) =>
        Effect.gen(function*() {
          const agent = yield* CurrentAgent
          const { response } = yield* unlock(agent, path.id, payload.payer, paymentOf(headers))
          return encodedAsIs(UnlockResponse, response, PRIVATE_ANSWER)
        }).pipe(Effect.tapError(failureHeaders(settlement, signing))))
      .handle("body", ({ headers, path }) =>
        Effect.gen(function*() {
          const resourceUrl = `${publicUrl}/api/handoffs/${path.id}/body`
          const proof = headers["sign-in-with-x"]
          const payment = paymentOf(headers)
          // HEAD only asks what a GET would answer: it never pays, nor spends a sign-in (each reads once).
          const { method } = yield* HttpServerRequest.HttpServerRequest
          if (proof !== undefined && proof.trim() !== "") {
            const verified = yield* signIn.verify(proof, resourceUrl)
            const body = yield* ledger.bodyForWallet(path.id, verified, method !== "HEAD")
            return encodedAsIs(BodyResponse, body, PRIVATE_ANSWER)
          }
          // A blank X-AGENT-ID is no identity: the caller gets the 402 challenge, like a caller without one.
          const agent = yield* CallingAgent
          if (Option.isNone(payment) || method === "HEAD") {
            return encodedAsIs(BodyResponse, yield* ledger.body(path.id, agent), PRIVATE_ANSWER)
          }
          // Pay and read at once: an x402 client retries the request that got the 402 with its payment. Read first:
          // a body this identity holds costs nothing more, and one it could not read once paid for (an id that reads
          // only by Sign-In-With-X) is refused before anything is charged.
          const buyer = yield* Option.match(agent, { onNone: () => Effect.fail(payerRequired), onSome: Effect.succeed })
          const held = yield* ledger.body(path.id, agent).pipe(
            Effect.asSome,
            Effect.catchTag("PaymentRequired", () => Effect.succeedNone)
          )
          if (Option.isSome(held)) return encodedAsIs(BodyResponse, held.value, PRIVATE_ANSWER)
          // The payer is the caller itself, so the one InvalidRequest of an unlock (payer mismatch) cannot come.
          yield* Effect.catchTag(unlock(buyer, path.id, buyer, payment), "InvalidRequest", Effect.die)
          return encodedAsIs(BodyResponse, yield* ledger.body(path.id, agent), PRIVATE_ANSWER)
        }).pipe(
          Effect.tapError(() => answeredPrivately),
          // The body's 402 also offers a sign-in to the wallet that paid (x402 Sign-In-With-X).
          Effect.tapError(
            failureHeaders(
              settlement,
              signing,
              Option.getOrElse(signIn.challenge(`${publicUrl}/api/handoffs/${path.id}/body`), () => ({}))
            )
          )
        ))
      .handle(
        "feedback",
        ({ path, payload }) => Effect.flatMap(CurrentAgent, (agent) => ledger.feedback(agent, path.id, payload.useful))
      )
      .handle(
        "receipt",
        ({ path }) =>
          Effect.zipRight(answeredPrivately, Effect.flatMap(CurrentAgent, (agent) => ledger.receiptFor(agent, path.id)))
      )
      .handle("receipts", ({ urlParams }) => ledger.listReceipts(toReceiptQuery(urlParams)))
      .handle("earnings", () =>
        Effect.gen(function*() {
          const [totals, recent] = yield* Effect.all([ledger.totals, ledger.recentSales(10)])
          return {
            ok: true as const,
            filerSharePct: 90,
            deskFeePct: 10,
            earnedUsdOnChain: toUsd(totals.filer_paid_on_chain_micro),
            onChainPayoutCount: totals.on_chain_payouts,
            deskVolumeUsd: toUsd(totals.volume_micro),
            buyerPaidOnChainUsd: toUsd(totals.on_chain_micro),
            filerPaidOnChainUsd: toUsd(totals.filer_paid_on_chain_micro),
            deskLedgerOnlyUsd: toUsd(totals.ledger_only_micro),
            filerOwedUsd: toUsd(totals.filer_owed_micro),
            filerLedgerUsd: toUsd(totals.filer_ledger_micro),
            totalsNote:
              "Totals count sales only: demo (sandbox) and self-test unlocks are excluded and owe the filer " +
              "nothing. deskLedgerOnlyUsd is desk-receipt volume with no USDC movement. filerOwedUsd is the filers' 90 % " +
              "of x402 sales still to be sent on-chain (status owed, pending or failed: a payout row will send it). " +
              "filerLedgerUsd is the filers' 90 % of desk-receipt sales (status ledger): recorded, never paid on-chain.",
            receiptCount: totals.receipts,
            recent: recent.map(receiptFor("public")),
            note: `Settlement: ${rail.label}. Buyer ids are masked in public listings.`,
            next: ["GET /api/discover", "GET /api/books", "GET /api/receipts?filer=<your id>", "GET /api/demand"],
            standingOrder: STANDING_ORDER
          }
        }))
      .handle("books", () =>
        Effect.gen(function*() {
          // One statement: the receipts and the purchases they must equal as of one moment.
          const totals = yield* ledger.totals
          return {
            ok: true as const,
            handoffs: totals.handoffs,
            filers: totals.filers,
            buyers: totals.buyers,
            receipts: totals.receipts,
            purchases: totals.purchases,
            volumeUsd: toUsd(totals.volume_micro),
            filerEarningsUsd: toUsd(totals.filer_micro),
            deskFeesUsd: toUsd(totals.desk_micro),
            onChainVolumeUsd: toUsd(totals.on_chain_micro),
            ledgerOnlyVolumeUsd: toUsd(totals.ledger_only_micro),
            filerOwedUsd: toUsd(totals.filer_owed_micro),
            filerLedgerUsd: toUsd(totals.filer_ledger_micro),
            balanced: totals.split_exact && totals.purchases === totals.receipts,
            note: "Counts exclude the demo packet and self-test unlocks; amounts are kept in exact micro-USDC and " +
              "shown in USD as JSON numbers, exact up to 9,007,199,254.740991 USD; balanced is judged on the exact " +
              "amounts. " +
              "filerOwedUsd will be sent on-chain; filerLedgerUsd (desk receipts) is recorded only and never paid on-chain."
          }
        }))
  }))
