import { Config, ConfigError, Either, Option, Redacted } from "effect"
import type { JsonWebKey } from "node:crypto"
import { algorithmOf } from "./OfferReceipt.ts"

const MESSAGE = "DESK_RECEIPT_SIGNING_KEY must be a private JWK (JSON with d) of an Ed25519 (kty OKP) or P-256 " +
  "(kty EC) key, e.g. from `node -e \"console.log(JSON.stringify(require('crypto').generateKeyPairSync('ed25519')" +
  ".privateKey.export({format:'jwk'})))\"`"

const invalid = () => Either.left(ConfigError.InvalidData(["DESK_RECEIPT_SIGNING_KEY"], MESSAGE))

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
    return Either.right(Option.some(Redacted.make(jwk as JsonWebKey)))
  })
)
