import { HttpApp, HttpServerResponse } from "@effect/platform"
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http"
import type { PaymentRequired as ChallengeV2, SettleResponse } from "@x402/core/types"
import { Effect, Option } from "effect"
import { PaymentInvalid, PaymentRequired, SettlementPending, SettlementUnavailable } from "../Domain/Errors.ts"
import type { Unlocked } from "../Ledger/PaidUnlock.ts"
import { challengeOf, settlementAnswerOf } from "../Ledger/X402Answers.ts"
import type { ReceiptSigning } from "../ReceiptSigning.ts"
import type { Settlement } from "../Settlement.ts"

const respondWith = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

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
    return Effect.flatMap(challengeOf(settlement, signing, error, extensions), (challenge) =>
      respondWith({
        "cache-control": "no-store",
        // x402's types are mutable and name networks as CAIP-2 template strings; the JSON is the same.
        ...Option.match(challenge, {
          onNone: () => ({}),
          onSome: (_) => ({ "payment-required": encodePaymentRequiredHeader(_ as unknown as ChallengeV2) })
        })
      }))
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
  Effect.flatMap(
    settlementAnswerOf(settlement, signing, settled, resourceUrl),
    Option.match({
      onNone: () => Effect.void,
      onSome: ({ answer, x402Version }) =>
        // A v1 answer names its network (`base-sepolia`), which x402's v2 type would have as CAIP-2; same JSON.
        respondWith({
          [x402Version === 1 ? "x-payment-response" : "payment-response"]: encodePaymentResponseHeader(
            answer as SettleResponse
          )
        })
    })
  )
