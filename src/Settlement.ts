import { Context, type Duration, type Effect, type Option } from "effect"
import type { PaymentInvalid, PaymentRequirementsV1, SettlementUnavailable } from "./Domain/Errors.ts"
import type { VerifiablePayment } from "./Domain/X402.ts"

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

export interface SignedPayout {
  readonly signedTx: string
  readonly txHash: string
  readonly txNonce: number
}

/** Where a stored, signed payout stands on-chain. `Dead`: its nonce went to another transaction, so it can never land. */
export type PayoutState =
  | { readonly _tag: "Confirmed" }
  | { readonly _tag: "Reverted" }
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Dead" }

/** USDC transfers from the desk wallet: signing is separate from broadcasting so the signed bytes can be stored first. */
export interface PayoutRail {
  /**
   * The longest any one step below can take, every RPC call's retries included: a worker's lease on a payout
   * covers one step and is renewed before the next.
   */
  readonly stepTimeout: Duration.Duration
  /** `reference` (the receipt id) rides in the transaction, so no two payouts share bytes or a hash. */
  readonly sign: (to: string, amountMicro: number, reference: string) => Effect.Effect<SignedPayout, string>
  /** Forgets nonces handed out for bytes that will never be broadcast (a worker that lost its lease). */
  readonly resetNonces: Effect.Effect<void>
  readonly broadcast: (signedTx: string) => Effect.Effect<void, string>
  readonly state: (payout: SignedPayout) => Effect.Effect<PayoutState, string>
  /** Waits (bounded) for the transaction to be mined; `InFlight` when it was not in time. */
  readonly confirm: (payout: SignedPayout) => Effect.Effect<PayoutState, string>
  /** A mined, successful transfer of this payout (one carrying `reference`) since `fromBlock`: its hash. */
  readonly findMined: (
    to: string,
    amountMicro: number,
    reference: string,
    fromBlock: bigint
  ) => Effect.Effect<Option.Option<string>, string>
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
 * The port between an unlock and money. The Ledger orders the steps (verify, claim, settle, receipt,
 * payout) and records each in the database; an adapter only talks to the rail and answers with data.
 */
export class Settlement extends Context.Tag("Settlement")<Settlement, {
  readonly rail: Rail
  /** The v1 challenge (`accepts` of the 402 body). */
  readonly accepts: (offer: Offer) => ReadonlyArray<PaymentRequirementsV1>
  /** The same challenge as x402 v2 `PAYMENT-REQUIRED` header value, when the rail takes payments. */
  readonly paymentRequiredHeader: (
    accepts: ReadonlyArray<PaymentRequirementsV1>,
    error: string | undefined,
    /** More of the challenge's `extensions` (a sign-in on a body's 402). */
    extensions?: Readonly<Record<string, unknown>>
  ) => Option.Option<string>
  /** The `X-PAYMENT-RESPONSE` (v1) or `PAYMENT-RESPONSE` (v2) header for a settled payment. */
  readonly paymentResponseHeader: (payment: VerifiedPayment, txHash: string) => readonly [name: string, value: string]
  /** Decodes an `X-PAYMENT` / `PAYMENT-SIGNATURE` value and checks it against this offer without the chain. */
  readonly parse: (offer: Offer, header: string) => Effect.Effect<VerifiedPayment, PaymentInvalid>
  /** The facilitator's checks (signature, balance, unused nonce, simulation). Nothing moves. */
  readonly verify: (payment: VerifiedPayment) => Effect.Effect<void, PaymentInvalid | SettlementUnavailable>
  /** Bounded by `settleTimeout`; `fromBlock` is where to look for the transaction if the answer is lost. */
  readonly settle: (payment: VerifiedPayment, fromBlock: bigint) => Effect.Effect<SettleOutcome>
  /** The longest one settlement attempt (lookup, settle, lookup) can take: a claim's lease covers it. */
  readonly settleTimeout: Duration.Duration
  readonly lookup: (payment: VerifiedPayment, fromBlock: bigint) => Effect.Effect<AuthorizationLookup>
  /** The chain head, recorded with a claim so a later lookup searches logs from there. */
  readonly blockNumber: Effect.Effect<bigint, SettlementUnavailable>
  readonly payouts: Option.Option<PayoutRail>
  readonly facilitatorReachable: Effect.Effect<boolean>
}>() {}
