import type { OfferInput, ReceiptInput, SignedOffer, SignedReceipt } from "@x402/extensions/offer-receipt"
import { Context, Effect, Layer, Option } from "effect"

/** The key offers and receipts are signed with, as the desk publishes it (/api/status, /.well-known/jwks.json). */
export interface SignerKey {
  /** A DID naming the key: did:pkh:eip155:<chain id>:<address> (EIP-712) or did:jwk:<public JWK> (JWS). */
  readonly kid: string
  readonly format: "eip712" | "jws"
  /** EIP-712: the signing wallet. */
  readonly address: string | null
  /** JWS: the public key, as a JWK with its kid, alg and use. */
  readonly jwk: Readonly<Record<string, string>> | null
}

/**
 * The port for x402's offer-receipt extension: signed offers in a 402, signed receipts for sales. EIP-712 by the
 * desk wallet, or JWS by a configured key; a desk with neither signs nothing and says so.
 */
export class ReceiptSigning extends Context.Tag("ReceiptSigning")<ReceiptSigning, {
  readonly key: Option.Option<SignerKey>
  readonly offer: (resourceUrl: string, input: OfferInput) => Effect.Effect<Option.Option<SignedOffer>>
  readonly receipt: (input: ReceiptInput) => Effect.Effect<Option.Option<SignedReceipt>>
}>() {
  static readonly none = Layer.succeed(ReceiptSigning, {
    key: Option.none(),
    offer: () => Effect.succeed(Option.none()),
    receipt: () => Effect.succeed(Option.none())
  })
}
