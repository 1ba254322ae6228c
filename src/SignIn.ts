import { Context, Effect, Layer, Option } from "effect"
import { SignInRefused } from "./Domain/Errors.ts"

/** A wallet that proved control by a signed Sign-In-With-X message, bound to one resource of this desk. */
export interface SignInProof {
  /** The wallet, checksummed. */
  readonly address: string
  /** The message's nonce: a proof is used once. */
  readonly nonce: string
  /** When the message stops being accepted anyway, so the nonce need not be remembered longer. */
  readonly acceptedUntil: Date
}

/**
 * The port for reading a bought body by wallet instead of by X-AGENT-ID (x402's Sign-In-With-X, CAIP-122): the
 * challenge a 402 advertises, and the check of a signed answer. A rail that takes no on-chain payment has no
 * wallet to sign in with.
 */
export class SignIn extends Context.Tag("SignIn")<SignIn, {
  /** The `extensions` entry of a v2 challenge for `resourceUrl` (absolute), when wallets can sign in. */
  readonly challenge: (resourceUrl: string) => Option.Option<Readonly<Record<string, unknown>>>
  /** The `SIGN-IN-WITH-X` header checked: this desk's origin, this resource, fresh, signed by its address. */
  readonly verify: (header: string, resourceUrl: string) => Effect.Effect<SignInProof, SignInRefused>
}>() {
  static readonly none = Layer.succeed(SignIn, {
    challenge: () => Option.none(),
    verify: () =>
      Effect.fail(
        new SignInRefused({
          reason: "siwx_unsupported",
          message: "This desk takes no on-chain payments, so no wallet paid for anything here: read with X-AGENT-ID."
        })
      )
  })
}
