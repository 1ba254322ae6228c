import { OFFER_RECEIPT } from "@x402/extensions/offer-receipt"
import { Effect, Option } from "effect"
import { PaymentInvalid, PaymentRequired } from "../Domain/Errors.ts"
import type { PaymentRequiredV2 } from "../Domain/X402.ts"
import type { ReceiptSigning } from "../ReceiptSigning.ts"
import type { Settlement } from "../Settlement.ts"
import type { Unlocked } from "./PaidUnlock.ts"
import { caipNetworkOf } from "./SignedReceipts.ts"

/**
 * What x402 answers beside an unlock's JSON, for both front doors: REST sends them as headers
 * (src/Http/PaymentHeaders.ts: `PAYMENT-REQUIRED`, `PAYMENT-RESPONSE`), MCP in its tool results.
 */

/** The v2 challenge, with one signed offer per requirement (x402 offer-receipt) when the desk signs. */
const withOffers = (signing: ReceiptSigning["Type"], challenge: PaymentRequiredV2) =>
  Effect.gen(function*() {
    if (Option.isNone(signing.key)) return challenge
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
    return {
      ...challenge,
      extensions: { ...challenge.extensions, [OFFER_RECEIPT]: { info: { offers: offers.flatMap(Option.toArray) } } }
    }
  })

/**
 * The v2 challenge of a refusal that asks for a payment (`payment_required`, `payment_invalid` with its reason),
 * with its signed offers; none without a payment rail or requirements.
 */
export const challengeOf = (
  settlement: Settlement["Type"],
  signing: ReceiptSigning["Type"],
  error: unknown,
  extensions: Readonly<Record<string, unknown>> = {}
): Effect.Effect<Option.Option<PaymentRequiredV2>> => {
  if (!(error instanceof PaymentRequired || error instanceof PaymentInvalid)) return Effect.succeedNone
  const reason = error instanceof PaymentInvalid ? error.reason : error.error
  return Option.match(Option.filter(settlement, () => error.accepts.length > 0), {
    onNone: () => Effect.succeedNone,
    onSome: (rail) => Effect.asSome(withOffers(signing, rail.challengeV2(error.accepts, reason, extensions)))
  })
}

/**
 * The settlement that bought a receipt as x402 answers it (`{success, transaction, network, payer}`, v2 with
 * `amount`), with the desk's signed receipt of the sale in its `extensions` when the desk signs; none for a sale
 * no payment settled here.
 */
export const settlementAnswerOf = (
  settlement: Settlement["Type"],
  signing: ReceiptSigning["Type"],
  settled: Unlocked["settled"],
  resourceUrl: string
): Effect.Effect<Option.Option<{ readonly x402Version: 1 | 2; readonly answer: object }>> =>
  Option.match(Option.all([settlement, settled]), {
    onNone: () => Effect.succeedNone,
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
        return Option.some({ x402Version, answer })
      })
  })
