import { Context, type Duration, type Effect, type Either, type Option } from "effect"
import type { PaymentRequirementsV1, SettlementUnavailable } from "./Domain/Errors.ts"
import type { PaymentRequiredV2, VerifiablePayment } from "./Domain/X402.ts"
import type { PayoutChannel } from "./Payouts/Rail.ts"

/** What a buyer is asked to pay for: one handoff at its listed price, sold at an absolute resource URL. */
export interface Offer {
  readonly handoffId: string
  readonly title: string
  readonly teaser: string
  readonly priceMicro: number
  readonly resource: string
}

/** A payment that passed every check against the desk's own requirements; (payerAddress, nonce) names it. */
export interface VerifiedPayment {
  readonly payerAddress: string
  readonly nonce: string
  readonly amountMicro: number
  /** Unix seconds after which the authorization can never be used on-chain. */
  readonly validBefore: number
  readonly payment: VerifiablePayment
  /**
   * The client's own id for this purchase (x402 payment-identifier extension, v2): retries under one id with new
   * authorizations return the first outcome; the id never names a second purchase.
   */
  readonly paymentId: string | null
}

/**
 * The one token `Transfer` log that backs a paid unlock: emitted by the same call as this authorization's
 * `AuthorizationUsed`, from the authorizer to payTo, of exactly the price. No two unlocks share one.
 */
export interface TransferRef {
  readonly chainId: number
  readonly txHash: string
  readonly logIndex: number
}

/**
 * A settlement attempt as data. `NotPaid`: the chain proves this authorization can never pay the desk (spent
 * elsewhere, cancelled, expired unused). `Refused`: the facilitator refused the payment itself (its signature,
 * amount, recipient...) before broadcasting, and the chain shows it unused; final only for a claim's first
 * attempt, since an earlier attempt may have been broadcast. Anything else is `Unknown`, never a refusal.
 */
export type SettleOutcome =
  | { readonly _tag: "Settled"; readonly transfer: TransferRef }
  | { readonly _tag: "NotPaid"; readonly reason: string }
  | { readonly _tag: "Refused"; readonly reason: string; readonly message: string }
  | { readonly _tag: "Unknown"; readonly detail: string }

/**
 * The token's own record of an authorization, read at one block: `Used` by the transfer that paid the desk,
 * `Unused` (`expired`: it can never be used any more), `Spent` without paying the desk (cancelled, or its own
 * transfer went elsewhere), or `Unknown` (not answered, or not seen yet: never a refusal).
 */
export type AuthorizationLookup =
  | { readonly _tag: "Used"; readonly transfer: TransferRef }
  | { readonly _tag: "Unused"; readonly expired: boolean }
  | { readonly _tag: "Spent"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly detail: string }

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

/** Why a payment was refused before anything moved, with a stable reason code (x402's `invalidReason` style). */
export interface Refusal {
  readonly reason: string
  readonly message: string
}

/** The settlement of a sale as x402 answers it (`X-PAYMENT-RESPONSE` in v1, `PAYMENT-RESPONSE` in v2). */
export interface SettledAnswer {
  readonly x402Version: 1 | 2
  /** `network` is the v1 name (`base-sepolia`) or the v2 CAIP-2 id (`eip155:84532`); `amount` is v2's. */
  readonly response: {
    readonly success: true
    readonly transaction: string
    readonly network: string
    readonly payer: string
    readonly amount?: string
  }
}

/**
 * One chain and scheme that takes payments, in the x402 shape: a challenge, the checks (without the chain, then
 * the facilitator's), a settlement and a lookup, each answering with data. The Ledger orders the steps (check,
 * claim, settle, receipt, payout) and records each in the database; the HTTP layer encodes the headers.
 */
export interface PaymentRail {
  /** The v1 challenge for an offer (`accepts` of the 402 body). */
  readonly challenge: (offer: Offer) => ReadonlyArray<PaymentRequirementsV1>
  /** The same challenge as x402 v2 states it (`PAYMENT-REQUIRED`), with more `extensions` when given. */
  readonly challengeV2: (
    accepts: ReadonlyArray<PaymentRequirementsV1>,
    error: string | undefined,
    extensions?: Readonly<Record<string, unknown>>
  ) => PaymentRequiredV2
  /**
   * Decodes an `X-PAYMENT` / `PAYMENT-SIGNATURE` value and checks it against this offer at this time, without the
   * chain; with no time (`undefined`), all but its validity window: what names a payment that may be claimed already.
   */
  readonly check: (
    offer: Offer,
    header: string,
    nowSeconds: number | undefined
  ) => Either.Either<VerifiedPayment, Refusal>
  /** The facilitator's checks (signature, balance, unused nonce, simulation): a refusal, or none. Nothing moves. */
  readonly verify: (payment: VerifiedPayment) => Effect.Effect<Option.Option<Refusal>, SettlementUnavailable>
  /** Bounded by `settleTimeout`; `fromBlock` is where to look for the transaction if the answer is lost. */
  readonly settle: (payment: VerifiedPayment, fromBlock: bigint) => Effect.Effect<SettleOutcome>
  /** The longest one settlement attempt (lookup, settle, lookup) can take: a claim's lease covers it. */
  readonly settleTimeout: Duration.Duration
  readonly lookup: (payment: VerifiedPayment, fromBlock: bigint) => Effect.Effect<AuthorizationLookup>
  /** What the buyer is told of a settled payment. */
  readonly settled: (payment: VerifiedPayment, txHash: string) => SettledAnswer
  /** The chain head, recorded with a claim so a later lookup searches logs from there. */
  readonly blockNumber: Effect.Effect<bigint, SettlementUnavailable>
  readonly facilitatorReachable: Effect.Effect<boolean>
}

/**
 * The port between an unlock and money: the rail that takes payments, or none. With none the desk writes desk
 * receipts (the ledger records the sale and no USDC moves) and refuses payment headers.
 */
export class Settlement extends Context.Tag("Settlement")<Settlement, Option.Option<PaymentRail>>() {}

/** What a settlement adapter provides: the rail that takes payments (or none), its description and its payouts. */
export type MoneyRails = Settlement | RailProfile | PayoutChannel

/** How the desk's money rail is described to agents and people (status, documents, pages). */
export class RailProfile extends Context.Tag("RailProfile")<RailProfile, Rail>() {}
