import { HttpApp, HttpServerResponse } from "@effect/platform"
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader
} from "@x402/core/http"
import type { PaymentRequired as ChallengeV2, SettleResponse } from "@x402/core/types"
import { OFFER_RECEIPT } from "@x402/extensions/offer-receipt"
import { Effect, Option } from "effect"
import { PaymentInvalid, PaymentRequired, SettlementPending, SettlementUnavailable } from "../Domain/Errors.ts"
import type { ReceiptSigning } from "../ReceiptSigning.ts"
import type { Settlement } from "../Settlement.ts"
import type { Unlocked } from "./PaidUnlock.ts"
import { caipNetworkOf } from "./SignedReceipts.ts"

const respondWith = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/** The v2 challenge with one signed offer per requirement (x402 offer-receipt), when the desk signs. */
const withSignedOffers = (signing: ReceiptSigning["Type"], header: string) =>
  Effect.gen(function*() {
    if (Option.isNone(signing.key)) return header
    const challenge: ChallengeV2 = decodePaymentRequiredHeader(header)
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
    })
  })

/**
 * x402 lives partly in headers the error schemas cannot carry: the v2 challenge (`PAYMENT-REQUIRED`, also on
 * a refused payment, with its reason and signed offers) and `Retry-After` while a settlement is pending or the
 * chain is down.
 */
export const failureHeaders = (
  settlement: Settlement["Type"],
  signing: ReceiptSigning["Type"],
  extensions: Readonly<Record<string, unknown>> = {}
) =>
(error: unknown) => {
  if (error instanceof PaymentRequired || error instanceof PaymentInvalid) {
    const reason = error instanceof PaymentInvalid ? error.reason : error.error
    const header = settlement.paymentRequiredHeader(error.accepts, reason, extensions)
    return Effect.flatMap(
      Option.match(header, {
        onNone: () => Effect.succeed({}),
        onSome: (value) => Effect.map(withSignedOffers(signing, value), (signed) => ({ "payment-required": signed }))
      }),
      (challenge) => respondWith({ "cache-control": "no-store", ...challenge })
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
  unlocked: Unlocked,
  resourceUrl: string
) =>
  Option.match(unlocked.settled, {
    onNone: () => Effect.void,
    onSome: ({ payment, txHash }) =>
      Effect.gen(function*() {
        const [name, value] = settlement.paymentResponseHeader(payment, txHash)
        const response: SettleResponse = decodePaymentResponseHeader(value)
        const receipt = yield* signing.receipt({
          resourceUrl,
          payer: payment.payerAddress,
          network: caipNetworkOf(response.network),
          transaction: txHash
        })
        const signed = Option.match(receipt, {
          onNone: () => value,
          onSome: (receipt) =>
            encodePaymentResponseHeader({
              ...response,
              extensions: { ...response.extensions, [OFFER_RECEIPT]: { info: { receipt } } }
            })
        })
        return yield* respondWith({ [name.toLowerCase()]: signed })
      })
  })
