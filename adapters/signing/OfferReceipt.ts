import {
  createEIP712OfferReceiptIssuer,
  createJWSOfferReceiptIssuer,
  type JWSSigner,
  type OfferReceiptIssuer,
  type SignTypedDataFn
} from "@x402/extensions/offer-receipt"
import { Effect, Layer, Option, Redacted } from "effect"
import { createPrivateKey, type JsonWebKey, sign } from "node:crypto"
import type { Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { ReceiptSigning, type SignerKey } from "../../src/ReceiptSigning.ts"

/**
 * A signature that cannot be made leaves the answer unsigned instead of failing it: the sale it would attest is
 * already recorded, and a buyer told 500 after paying would be told the wrong thing.
 */
const signed = <A>(what: string, sign: () => Promise<A>) =>
  Effect.tryPromise(sign).pipe(
    Effect.map(Option.some),
    Effect.catchAll((error) => Effect.as(Effect.logWarning(`could not sign the ${what}`, String(error)), Option.none()))
  )

const serviceOf = (issuer: OfferReceiptIssuer, key: SignerKey): ReceiptSigning["Type"] => ({
  key: Option.some(key),
  offer: (resourceUrl, input) => signed("offer", () => issuer.issueOffer(resourceUrl, input)),
  receipt: (input) =>
    signed("receipt", () => issuer.issueReceipt(input.resourceUrl, input.payer, input.network, input.transaction))
})

/** EIP-712 by the desk wallet; the key names the wallet as did:pkh on the desk's chain. */
export const eip712 = (walletKey: Redacted.Redacted<Hex>, chainId: number) => {
  const account = privateKeyToAccount(Redacted.value(walletKey))
  const kid = `did:pkh:eip155:${chainId}:${account.address}`
  const signTypedData: SignTypedDataFn = (params) =>
    account.signTypedData(params as Parameters<typeof account.signTypedData>[0])
  return Layer.succeed(
    ReceiptSigning,
    serviceOf(createEIP712OfferReceiptIssuer(kid, signTypedData), {
      kid,
      format: "eip712",
      address: account.address,
      jwk: null
    })
  )
}

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url")

/** The JWS algorithm of a private JWK the desk accepts: Ed25519 (EdDSA) or P-256 (ES256). */
export const algorithmOf = (jwk: JsonWebKey): "EdDSA" | "ES256" | undefined =>
  jwk.kty === "OKP" && jwk.crv === "Ed25519"
    ? "EdDSA"
    : jwk.kty === "EC" && jwk.crv === "P-256"
    ? "ES256"
    : undefined

/** JWS by a private JWK (DESK_RECEIPT_SIGNING_KEY); the key names itself as did:jwk, so anyone can verify. */
export const jws = (privateJwk: Redacted.Redacted<JsonWebKey>) => {
  const jwk = Redacted.value(privateJwk)
  const algorithm = algorithmOf(jwk)!
  const privateKey = createPrivateKey({ key: jwk, format: "jwk" })
  const { d: _secret, ...publicJwk } = jwk
  const kid = `did:jwk:${base64url(JSON.stringify(publicJwk))}`
  const signer: JWSSigner = {
    kid,
    format: "jws",
    algorithm,
    sign: (payload) =>
      Promise.resolve(
        base64url(
          sign(algorithm === "EdDSA" ? null : "sha256", payload, { key: privateKey, dsaEncoding: "ieee-p1363" })
        )
      )
  }
  const published = { ...publicJwk, kid, alg: algorithm, use: "sig" } as Record<string, string>
  return Layer.succeed(
    ReceiptSigning,
    serviceOf(createJWSOfferReceiptIssuer(kid, signer), { kid, format: "jws", address: null, jwk: published })
  )
}
