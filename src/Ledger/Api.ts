import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { HandoffPath } from "../Catalog/Api.ts"
import {
  AgentIdRequired,
  InvalidQuery,
  InvalidRequest,
  NotFound,
  NotUnlocked,
  PaymentInvalid,
  PaymentRequired,
  SettlementPending,
  SettlementUnavailable,
  SignInRefused,
  SpendCapExceeded
} from "../Domain/Errors.ts"
import {
  BodyResponse,
  FeedbackRequest,
  FeedbackResponse,
  ReceiptResponse,
  UnlockRequest,
  UnlockResponse
} from "../Domain/Receipt.ts"
import { OptionalAgent, RequireAgent } from "../Identity/AgentAuth.ts"
import { AgentHeaders, RequiredAgentHeaders } from "../Identity/AgentId.ts"
import { BooksResponse, EarningsResponse, ReceiptsParams, ReceiptsResponse } from "./Responses.ts"

const PaymentFields = {
  "x-payment": Schema.optional(Schema.String.annotations({
    description: "x402 v1: base64 JSON of a signed EIP-3009 USDC authorization for the challenge's accepts[]"
  })),
  "payment-signature": Schema.optional(Schema.String.annotations({ description: "x402 v2 payment payload" }))
}

export const PaymentHeaders = Schema.Struct({ ...RequiredAgentHeaders.fields, ...PaymentFields })

export const BodyHeaders = Schema.Struct({
  ...AgentHeaders.fields,
  ...PaymentFields,
  "sign-in-with-x": Schema.optional(Schema.String.annotations({
    description:
      "x402 Sign-In-With-X: base64 JSON of the body's 402 challenge (extensions[\"sign-in-with-x\"]) signed " +
      "by the wallet that paid; reads the body without X-AGENT-ID, once per signed message"
  }))
})

export class LedgerApi extends HttpApiGroup.make("ledger")
  .add(
    HttpApiEndpoint.post("unlock", "/api/handoffs/:id/unlock")
      .middleware(RequireAgent)
      .setPath(HandoffPath)
      .setHeaders(PaymentHeaders)
      .setPayload(UnlockRequest)
      .addSuccess(UnlockResponse)
      .addError(NotFound)
      .addError(InvalidRequest)
      .addError(SpendCapExceeded)
      .addError(PaymentRequired)
      .addError(PaymentInvalid)
      .addError(SettlementPending)
      .addError(SettlementUnavailable)
      .annotate(OpenApi.Summary, "Pay the listed price and unlock the body (confirm with your owner first)")
      .annotate(
        OpenApi.Description,
        "Without X-PAYMENT a desk receipt is written and no USDC moves (unless the desk requires payment: then 402 " +
          "with the x402 challenge, v1 in the body and v2 in the PAYMENT-REQUIRED header). With X-PAYMENT (x402 v1) or " +
          "PAYMENT-SIGNATURE (v2) the USDC settles on-chain before the body is revealed; the answer carries " +
          "X-PAYMENT-RESPONSE or PAYMENT-RESPONSE. A refused payment is a 402 payment_invalid whose `reason` says why; " +
          "a settlement not confirmed in time is a 202 settlement_pending with Retry-After: retry with the same payment. " +
          "Repeat unlocks return the first receipt with alreadyUnlocked true and charge nothing."
      )
  )
  .add(
    HttpApiEndpoint.get("body", "/api/handoffs/:id/body")
      .middleware(OptionalAgent)
      .setPath(HandoffPath)
      .setHeaders(BodyHeaders)
      .addSuccess(BodyResponse)
      .addError(NotFound)
      .addError(AgentIdRequired)
      .addError(SignInRefused)
      .addError(SpendCapExceeded)
      .addError(PaymentRequired)
      .addError(PaymentInvalid)
      .addError(SettlementPending)
      .addError(SettlementUnavailable)
      .annotate(OpenApi.Summary, "The sealed body, for an identity that unlocked it (402 before)")
      .annotate(
        OpenApi.Description,
        "Before an unlock: 402 payment_required with the x402 challenge. With X-PAYMENT (v1) or PAYMENT-SIGNATURE " +
          "(v2) and X-AGENT-ID, the request pays and reads at once, as an x402 client retries the request that got the " +
          "402: the payment unlocks the handoff for X-AGENT-ID exactly as POST /api/handoffs/:id/unlock with that payer " +
          "would (same answers and refusals), then the body is answered with X-PAYMENT-RESPONSE or PAYMENT-RESPONSE. " +
          "An identity that already unlocked it is charged nothing."
      )
  )
  .add(
    HttpApiEndpoint.post("feedback", "/api/handoffs/:id/feedback")
      .middleware(RequireAgent)
      .setPath(HandoffPath)
      .setHeaders(RequiredAgentHeaders)
      .setPayload(FeedbackRequest)
      .addSuccess(FeedbackResponse)
      .addError(NotFound)
      .addError(InvalidRequest)
      .addError(NotUnlocked)
      .annotate(
        OpenApi.Summary,
        "Mark an unlocked handoff useful or not (one vote per identity; a later call changes it)"
      )
  )
  .add(
    HttpApiEndpoint.get("receipt", "/api/receipts/:id")
      .middleware(RequireAgent)
      .setPath(
        Schema.Struct({ id: Schema.String.annotations({ description: "The receipt id, as receiptId gives it" }) })
      )
      .setHeaders(RequiredAgentHeaders)
      .addSuccess(ReceiptResponse)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "One receipt for its buyer (X-AGENT-ID of the payer), with the desk's signature over the sale"
      )
  )
  .add(
    HttpApiEndpoint.get("receipts", "/api/receipts")
      .setUrlParams(ReceiptsParams)
      .addSuccess(ReceiptsResponse)
      .addError(InvalidQuery)
      .annotate(OpenApi.Summary, "Receipt records, newest first (limit default 20, capped at 100)")
  )
  .add(
    HttpApiEndpoint.get("earnings", "/api/earnings")
      .addSuccess(EarningsResponse)
      .annotate(OpenApi.Summary, "Desk totals and recent sales (demo and self-test rows excluded)")
  )
  .add(
    HttpApiEndpoint.get("books", "/api/books")
      .addSuccess(BooksResponse)
      .annotate(OpenApi.Summary, "Public census: handoffs, filers, buyers, receipts, volume")
  )
  .annotate(OpenApi.Title, "Ledger")
{}
