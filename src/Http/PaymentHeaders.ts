import { HttpApp, HttpServerResponse } from "@effect/platform"
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http"
import type { PaymentRequired as ChallengeV2, SettleResponse } from "@x402/core/types"
import { OFFER_RECEIPT } from "@x402/extensions/offer-receipt"
import { Effect, Option } from "effect"
import { PaymentInvalid, PaymentRequired, SettlementPending, SettlementUnavailable } from "../Domain/Errors.ts"
import type { PaymentRequiredV2 } from "../Domain/X402.ts"
import type { Unlocked } from "../Ledger/PaidUnlock.ts"
import { caipNetworkOf } from "../Ledger/SignedReceipts.ts"
import type { ReceiptSigning } from "../ReceiptSigning.ts"
import type { Settlement } from "../Settlement.ts"

const respondWith = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/** The v2 challenge, with one signed offer per requirement (x402 offer-receipt) when the desk signs. */
const challengeHeader = (signing: ReceiptSigning["Type"], challenge: PaymentRequiredV2) =>
  Effect.gen(function*() {
    // x402's types are mutable and name networks as CAIP-2 template strings; the JSON is the same.
    if (Option.isNone(signing.key)) return encodePaymentRequiredHeader(challenge as unknown as ChallengeV2)
    const offers = yield* Effect.forEach(challenge.accepts, (requirement, acceptIndex) =>
      signing.offer(challenge.resource.url, {
        acceptIndex,
        scheme: requirement.scheme,
        network: requirement.network,
        asset: requirement.asset,
        payTo: requirement.payTo,
        amount: requirement.amount,
        offerValiditySeconds: requirement.maxTimeoutSeconds
      }))
    return encodePaymentRequiredHeader({
      ...challenge,
      extensions: { ...challenge.extensions, [OFFER_RECEIPT]: { info: { offers: offers.flatMap(Option.toArray) } } }
    } as unknown as ChallengeV2)
  })

/**
 * x402 lives partly in headers the error schemas cannot carry: the v2 challenge (`PAYMENT-REQUIRED`, also on
 * a refused payment, with its reason and signed offers) and `Retry-After` while a settlement is pending or the
 * chain is down. A desk without a payment rail sends no challenge header.
 */
export const failureHeaders = (
  settlement: Settlement["Type"],
  signing: ReceiptSigning["Type"],
  extensions: Readonly<Record<string, unknown>> = {}
) =>
(error: unknown) => {
  if (error instanceof PaymentRequired || error instanceof PaymentInvalid) {
    const reason = error instanceof PaymentInvalid ? error.reason : error.error
    const challenge = Option.filter(settlement, () => error.accepts.length > 0)
    return Effect.flatMap(
      Option.match(challenge, {
        onNone: () => Effect.succeed({}),
        onSome: (rail) =>
          Effect.map(
            challengeHeader(signing, rail.challengeV2(error.accepts, reason, extensions)),
            (header) => ({ "payment-required": header })
          )
      }),
      (headers) => respondWith({ "cache-control": "no-store", ...headers })
    )
  }
  if (error instanceof SettlementPending || error instanceof SettlementUnavailable) {
    return respondWith({ "retry-after": String(error.retryAfterSeconds) })
  }
  return Effect.void
}

/**
 * `X-PAYMENT-RESPONSE` (v1) or `PAYMENT-RESPONSE` (v2) with the settlement that bought this receipt, and the
 * desk's signed receipt of the sale in its `extensions` (x402 offer-receipt) when the desk signs.
 */
export const settledHeaders = (
  settlement: Settlement["Type"],
  signing: ReceiptSigning["Type"],
  settled: Unlocked["settled"],
  resourceUrl: string
) =>
  Option.match(Option.all([settlement, settled]), {
    onNone: () => Effect.void,
    onSome: ([rail, { payment, txHash }]) =>
      Effect.gen(function*() {
        const { response, x402Version } = rail.settled(payment, txHash)
        const receipt = yield* signing.receipt({
          resourceUrl,
          payer: payment.payerAddress,
          network: caipNetworkOf(response.network),
          transaction: txHash
        })
        const answer = Option.match(receipt, {
          onNone: () => response,
          onSome: (receipt) => ({ ...response, extensions: { [OFFER_RECEIPT]: { info: { receipt } } } })
        })
        const name = x402Version === 1 ? "x-payment-response" : "payment-response"
        // A v1 answer names its network (`base-sepolia`), which x402's v2 type would have as CAIP-2; same JSON.
        return yield* respondWith({ [name]: encodePaymentResponseHeader(answer as SettleResponse) })
      })
  })
