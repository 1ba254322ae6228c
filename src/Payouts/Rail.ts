import { Context, Data, type Duration, type Effect, Option } from "effect"

export interface SignedPayout {
  readonly signedTx: string
  readonly txHash: string
  readonly txNonce: number
}

/**
 * Where a stored, signed payout stands on-chain. `Dead`: its nonce went to another transaction, so it can never
 * land. `seenAt`: the block at which the chain showed it so (the reverted receipt's, or the head whose nonce was
 * past it); a search for another of the payout's transactions must reach at least that block.
 */
export type PayoutState =
  | { readonly _tag: "Confirmed" }
  | { readonly _tag: "Reverted"; readonly seenAt: bigint }
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Dead"; readonly seenAt: bigint }

/** What a payout step could not do (the RPC's words): the outbox worker records it and retries later. */
export class PayoutFailure extends Data.TaggedError("PayoutFailure")<{ readonly message: string }> {}

/** USDC transfers from the desk wallet: signing is separate from broadcasting so the signed bytes can be stored first. */
export interface PayoutRail {
  /**
   * The longest any one step below can take, every RPC call's retries included: a worker's lease on a payout
   * covers one step and is renewed before the next.
   */
  readonly stepTimeout: Duration.Duration
  /** `reference` (the receipt id) rides in the transaction, so no two payouts share bytes or a hash. */
  readonly sign: (to: string, amountMicro: number, reference: string) => Effect.Effect<SignedPayout, PayoutFailure>
  /** Forgets nonces handed out for bytes that will never be broadcast (a worker that lost its lease). */
  readonly resetNonces: Effect.Effect<void>
  readonly broadcast: (signedTx: string) => Effect.Effect<void, PayoutFailure>
  readonly state: (payout: SignedPayout) => Effect.Effect<PayoutState, PayoutFailure>
  /** Waits (bounded) for the transaction to be mined; `InFlight` when it was not in time. */
  readonly confirm: (payout: SignedPayout) => Effect.Effect<PayoutState, PayoutFailure>
  /**
   * A mined, successful transfer of this payout (one carrying `reference`) from `fromBlock` through at least
   * `throughBlock`: its hash. A node whose head is behind `throughBlock` cannot say there is none: a failure.
   */
  readonly findMined: (
    to: string,
    amountMicro: number,
    reference: string,
    fromBlock: bigint,
    throughBlock: bigint
  ) => Effect.Effect<Option.Option<string>, PayoutFailure>
}

/**
 * The port for paying filers their share on-chain: none on a desk without a wallet key (shares stay owed, or on the
 * ledger for desk receipts). Separate from settlement: taking payments needs no wallet of the desk's own.
 */
export class PayoutChannel extends Context.Tag("PayoutChannel")<PayoutChannel, Option.Option<PayoutRail>>() {
  static readonly none = Option.none<PayoutRail>()
}
