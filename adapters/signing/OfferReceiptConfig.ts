import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { createPrivateKey, createPublicKey, type JsonWebKey } from "node:crypto"
import { algorithmOf } from "./OfferReceipt.ts"

const MESSAGE = "DESK_RECEIPT_SIGNING_KEY must be a private JWK (JSON with d) of an Ed25519 (kty OKP) or P-256 " +
  "(kty EC) key, e.g. from `node -e \"console.log(JSON.stringify(require('crypto').generateKeyPairSync('ed25519')" +
  ".privateKey.export({format:'jwk'})))\"`"

const invalid = (message = MESSAGE) => Either.left(ConfigError.InvalidData(["DESK_RECEIPT_SIGNING_KEY"], message))

const MISMATCH = "DESK_RECEIPT_SIGNING_KEY's public half (x, y) is not its private key's (d): the desk would publish " +
  "a key its signatures do not verify against; export the key pair again"

/** The public half its private key `d` has, as a JWK, or none when the JWK is no key node can read. */
const derivedPublic = (jwk: JsonWebKey): JsonWebKey | undefined => {
  try {
    return createPublicKey(createPrivateKey({ key: jwk, format: "jwk" })).export({ format: "jwk" })
  } catch {
    return undefined
  }
}

/** The private key that signs offers and receipts by JWS when no desk wallet signs them; never printed. */
export const signingKeyConfig: Config.Config<Option.Option<Redacted.Redacted<JsonWebKey>>> = Config.redacted(
  "DESK_RECEIPT_SIGNING_KEY"
).pipe(
  Config.option,
  Config.map(Option.filter((_) => Redacted.value(_).trim() !== "")),
  Config.mapOrFail((key) => {
    if (Option.isNone(key)) return Either.right(Option.none())
    let jwk: unknown
    try {
      jwk = JSON.parse(Redacted.value(key.value))
    } catch {
      return invalid()
    }
    if (typeof jwk !== "object" || jwk === null || typeof (jwk as JsonWebKey).d !== "string") return invalid()
    if (algorithmOf(jwk as JsonWebKey) === undefined) return invalid()
    // Published as it is given: a public half that is not d's would publish a key no signature verifies against.
    const derived = derivedPublic(jwk as JsonWebKey)
    if (derived === undefined) return invalid()
    if (derived.x !== (jwk as JsonWebKey).x || derived.y !== (jwk as JsonWebKey).y) return invalid(MISMATCH)
    return Either.right(Option.some(Redacted.make(jwk as JsonWebKey)))
  })
)
