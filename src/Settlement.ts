import { Context, type Effect } from "effect"
import type { PaymentInvalid, PaymentRequirementsV1, SettlementPending } from "./Domain/Errors.ts"

/** What a buyer is asked to pay for: one handoff at its listed price, sold at an absolute resource URL. */
export interface Offer {
  readonly handoffId: string
  readonly title: string
  readonly priceMicro: number
  readonly resource: string
}

/** A payment that passed every check and can be settled; `nonce` identifies it across retries and replays. */
export interface VerifiedPayment {
  readonly nonce: string
  readonly payerAddress: string
  readonly amountMicro: number
  readonly raw: unknown
}

export interface SettledPayment {
  readonly txHash: string
  readonly network: string
}

export interface PayoutResult {
  readonly txHash: string
}

export interface Rail {
  readonly stage: string
  readonly network: string
  readonly label: string
  readonly asset: "USDC"
  readonly assetAddress: string | null
  readonly eip712: { readonly name: string; readonly version: string } | null
  readonly payTo: string | null
  readonly x402Ready: boolean
  readonly facilitatorKind: "none" | "local" | "remote"
  readonly payoutEnabled: boolean
  readonly explorerTxUrl: (txHash: string) => string | null
  readonly note: string
}

/**
 * The port between an unlock and money. The Ledger orders the steps (claim, verify, settle, receipt,
 * payout) and records each in the database; an adapter only talks to the rail.
 */
export class Settlement extends Context.Tag("Settlement")<Settlement, {
  readonly rail: Rail
  readonly accepts: (offer: Offer) => ReadonlyArray<PaymentRequirementsV1>
  readonly verify: (offer: Offer, payment: string) => Effect.Effect<VerifiedPayment, PaymentInvalid>
  readonly settle: (offer: Offer, payment: VerifiedPayment) => Effect.Effect<SettledPayment, PaymentInvalid | SettlementPending>
  readonly payout: (to: string, amountMicro: number) => Effect.Effect<PayoutResult, PaymentInvalid>
  readonly facilitatorReachable: Effect.Effect<boolean>
}>() {}
