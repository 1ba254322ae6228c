import {
  buildSIWxSchema,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  validateSIWxMessage,
  verifySIWxSignature
} from "@x402/extensions/sign-in-with-x"
import { Effect, Layer, Option } from "effect"
import { getAddress } from "viem"
import { SignInRefused } from "../../src/Domain/Errors.ts"
import { SignIn, type SignInProof } from "../../src/SignIn.ts"
import type { X402Settings } from "./X402Config.ts"
import { caipNetwork } from "./X402Requirements.ts"

/** How long a signed message is accepted after it was issued (x402's own default). */
const MAX_AGE_MS = 5 * 60 * 1000

const refuse = (reason: string, message: string) => Effect.fail(new SignInRefused({ reason, message }))

const freshNonce = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex")

/** x402's checks answer with a reason; one that throws instead is a message it could not read. */
const checked = <A>(check: () => Promise<A>) =>
  Effect.tryPromise({
    try: check,
    catch: (error) =>
      new SignInRefused({
        reason: "invalid_siwx_message",
        message: `The SIWx message cannot be checked: ${String((error as Error).message).split("\n")[0]}`
      })
  })

/** Sign-In-With-X for the wallets that pay this desk: EIP-191 messages on its own chain, bound to its origin. */
export const make = (settings: X402Settings): SignIn["Type"] => {
  const chainId = caipNetwork(settings)

  const challenge = (resourceUrl: string) => {
    const issuedAt = new Date()
    return Option.some({
      [SIGN_IN_WITH_X]: {
        info: {
          domain: new URL(resourceUrl).host,
          uri: resourceUrl,
          statement: "Read a handoff this wallet paid for.",
          version: "1",
          nonce: freshNonce(),
          issuedAt: issuedAt.toISOString(),
          expirationTime: new Date(issuedAt.getTime() + MAX_AGE_MS).toISOString(),
          resources: [resourceUrl]
        },
        supportedChains: [{ chainId, type: "eip191" }],
        schema: buildSIWxSchema()
      }
    })
  }

  const verify = (header: string, resourceUrl: string): Effect.Effect<SignInProof, SignInRefused> =>
    Effect.gen(function*() {
      const payload = yield* Effect.try({
        try: () => parseSIWxHeader(header.trim()),
        catch: (error) =>
          new SignInRefused({
            reason: "invalid_siwx_header",
            message: `SIGN-IN-WITH-X must be base64 JSON of a signed SIWx message: ${
              String((error as Error).message).split("\n")[0]
            }`
          })
      })
      const valid = yield* checked(() => validateSIWxMessage(payload, new URL(resourceUrl), { maxAge: MAX_AGE_MS }))
      if (!valid.isValid) return yield* refuse(valid.invalidReason, valid.invalidMessage)
      if (payload.uri !== resourceUrl) {
        return yield* refuse(
          "invalid_siwx_uri_mismatch",
          `The message signs in to ${payload.uri}, not ${resourceUrl}: sign the challenge of this body.`
        )
      }
      if (payload.chainId !== chainId || payload.type !== "eip191") {
        return yield* refuse(
          "invalid_siwx_chain_id",
          `This desk is paid on ${chainId}: sign in with an EIP-191 message for that chain.`
        )
      }
      const signed = yield* checked(() => verifySIWxSignature(payload))
      if (!signed.isValid) return yield* refuse(signed.invalidReason, signed.invalidMessage)
      return {
        address: getAddress(signed.payer),
        nonce: payload.nonce,
        acceptedUntil: new Date(new Date(payload.issuedAt).getTime() + MAX_AGE_MS)
      }
    })

  return { challenge, verify }
}

export const layer = (settings: X402Settings) => Layer.succeed(SignIn, make(settings))
