import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { PaymentInvalid, PaymentRequired, SettlementPending, SettlementUnavailable } from "../Domain/Errors.ts"
import type { Settlement } from "../Settlement.ts"
import type { Unlocked } from "./PaidUnlock.ts"

const respondWith = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/**
 * x402 lives partly in headers the error schemas cannot carry: the v2 challenge (`PAYMENT-REQUIRED`, also on
 * a refused payment, with its reason) and `Retry-After` while a settlement is pending or the chain is down.
 */
export const failureHeaders = (
  settlement: Settlement["Type"],
  extensions: Readonly<Record<string, unknown>> = {}
) =>
(error: unknown) => {
  if (error instanceof PaymentRequired || error instanceof PaymentInvalid) {
    const reason = error instanceof PaymentInvalid ? error.reason : error.error
    const header = settlement.paymentRequiredHeader(error.accepts, reason, extensions)
    return respondWith({
      "cache-control": "no-store",
      ...Option.match(header, { onNone: () => ({}), onSome: (value) => ({ "payment-required": value }) })
    })
  }
  if (error instanceof SettlementPending || error instanceof SettlementUnavailable) {
    return respondWith({ "retry-after": String(error.retryAfterSeconds) })
  }
  return Effect.void
}

/** `X-PAYMENT-RESPONSE` (v1) or `PAYMENT-RESPONSE` (v2) with the settlement that bought this receipt. */
export const settledHeaders = (settlement: Settlement["Type"], unlocked: Unlocked) =>
  Option.match(unlocked.settled, {
    onNone: () => Effect.void,
    onSome: ({ payment, txHash }) => {
      const [name, value] = settlement.paymentResponseHeader(payment, txHash)
      return respondWith({ [name.toLowerCase()]: value })
    }
  })
